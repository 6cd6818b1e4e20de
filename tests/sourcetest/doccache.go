package sourcetest

import "sync"

// docCache keeps rendered small documents, keyed by path and ETag, so that
// repeated requests for the same version cost nothing. It is bounded in
// bytes; when full it starts over.
type docCache struct {
	mu    sync.Mutex
	limit int
	used  int
	docs  map[string][]byte
}

func newDocCache(limit int) *docCache {
	return &docCache{limit: limit, docs: map[string][]byte{}}
}

func (c *docCache) get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.docs[key]
	return b, ok
}

func (c *docCache) put(key string, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(b) > c.limit {
		return
	}
	if c.used+len(b) > c.limit {
		c.docs, c.used = map[string][]byte{}, 0
	}
	if _, ok := c.docs[key]; !ok {
		c.docs[key] = b
		c.used += len(b)
	}
}
