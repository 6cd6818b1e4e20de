package catalog

import "rsfs/resourcesync"

// UnknownLengths returns the URIs of live resources whose length is not
// known, for the loader to learn (HEAD) before Seal.
func (c *Catalog) UnknownLengths() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []string
	for id := NodeID(1); id < c.files.next; id++ {
		f := c.files.at(id)
		if f.flags&flagDeleted == 0 && f.size == resourcesync.NoLength {
			out = append(out, c.uriOf(f))
		}
	}
	return out
}

// SetLength records the length of a resource learned otherwise (HEAD, a dump
// manifest). It reports whether the URI is known. After Seal the change is
// not reported as an effect: use Upsert for versions.
func (c *Catalog) SetLength(uri string, n int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.findURI(uriHash(uri), uri)
	if ok {
		f := c.files.at(id)
		c.liveBytes += max(n, 0) - max(f.size, 0)
		f.size = n
	}
	return ok
}
