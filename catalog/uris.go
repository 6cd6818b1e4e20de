package catalog

// URIs returns the URI of every live resource, in no particular order
// (for reconciling with reloaded Resource Lists).
func (c *Catalog) URIs() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, 0, c.live)
	for id := NodeID(1); c.files.valid(id); id++ {
		if f := c.files.at(id); f.flags&flagDeleted == 0 {
			out = append(out, c.uriOf(f))
		}
	}
	return out
}

// Unsized counts the live files whose length is not known (resourcesync.NoLength).
func (c *Catalog) Unsized() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := 0
	for id := NodeID(1); c.files.valid(id); id++ {
		if f := c.files.at(id); f.flags&flagDeleted == 0 && f.size < 0 {
			n++
		}
	}
	return n
}
