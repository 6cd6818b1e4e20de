package fetch

import (
	"net/http"
	"sort"
	"sync"
	"sync/atomic"

	"rsfs/origin"
)

// TrafficKey says what requests a Traffic row counts.
type TrafficKey struct {
	Origin string // canonical, as package origin gives it: http://Host:80 and http://host are one
	Kind   string // "get" (a whole document or body), "range" or "head"
	Status int    // the response status; 0 when no response came
}

// Traffic counts requests of one kind.
type Traffic struct {
	TrafficKey
	Requests int64
}

// traffic counts requests by origin, kind and status, and body bytes by
// origin.
type traffic struct {
	mu       sync.Mutex
	requests map[TrafficKey]int64
	bytes    map[string]*atomic.Int64
}

// originOf is rawURL's canonical origin (package origin, DESIGN §9), the
// one key of an origin's pacer, health, network and traffic: two
// spellings of one origin share them. "" if rawURL has none.
func originOf(rawURL string) string {
	o, err := origin.Of(rawURL)
	if err != nil {
		return ""
	}
	return o
}

func kindOf(method string, header http.Header) string {
	switch {
	case method == http.MethodHead:
		return "head"
	case header.Get("Range") != "":
		return "range"
	}
	return "get"
}

func (t *traffic) count(k TrafficKey) {
	t.mu.Lock()
	if t.requests == nil {
		t.requests = map[TrafficKey]int64{}
	}
	t.requests[k]++
	t.mu.Unlock()
}

// bytesOf returns the counter of body bytes read from origin.
func (t *traffic) bytesOf(origin string) *atomic.Int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bytes == nil {
		t.bytes = map[string]*atomic.Int64{}
	}
	n, ok := t.bytes[origin]
	if !ok {
		n = new(atomic.Int64)
		t.bytes[origin] = n
	}
	return n
}

// Traffic returns the requests sent, by origin, kind and status, in order.
func (c *Client) Traffic() []Traffic {
	c.traffic.mu.Lock()
	out := make([]Traffic, 0, len(c.traffic.requests))
	for k, n := range c.traffic.requests {
		out = append(out, Traffic{TrafficKey: k, Requests: n})
	}
	c.traffic.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Origin != b.Origin {
			return a.Origin < b.Origin
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Status < b.Status
	})
	return out
}

// BytesByOrigin returns the response body bytes read from each origin.
func (c *Client) BytesByOrigin() map[string]int64 {
	c.traffic.mu.Lock()
	defer c.traffic.mu.Unlock()
	out := make(map[string]int64, len(c.traffic.bytes))
	for o, n := range c.traffic.bytes {
		out[o] = n.Load()
	}
	return out
}
