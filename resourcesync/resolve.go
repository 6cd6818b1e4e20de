package resourcesync

import (
	"bytes"
	"math/bits"
	"net/url"
)

// resolver resolves <loc> and href values against the document URL.
type resolver struct {
	base *url.URL // nil: no document URL, values are kept as published
}

func newResolver(docURL string) resolver {
	if docURL == "" {
		return resolver{}
	}
	u, err := url.Parse(docURL)
	if err != nil {
		return resolver{}
	}
	return resolver{base: u}
}

// resolve returns ref resolved against the base as net/url's
// ResolveReference would, and false if ref is not a URL reference (it is
// then returned as published).
func (rs resolver) resolve(ref []byte) (string, bool) {
	if rs.base == nil || isPlainHTTPURL(ref) {
		return string(ref), true
	}
	u, err := url.Parse(string(ref))
	if err != nil {
		return string(ref), false
	}
	return rs.base.ResolveReference(u).String(), true
}

// isPlainHTTPURL reports whether ref is an absolute http(s) URL that
// ResolveReference(...).String() returns unchanged: a plain host, a path
// without dot segments or escapes, and an optional plain query. The
// equivalence is checked by FuzzResolveFastPath.
func isPlainHTTPURL(ref []byte) bool {
	var rest []byte
	switch {
	case bytes.HasPrefix(ref, []byte("http://")):
		rest = ref[len("http://"):]
	case bytes.HasPrefix(ref, []byte("https://")):
		rest = ref[len("https://"):]
	default:
		return false
	}
	slash := bytes.IndexByte(rest, '/')
	if slash <= 0 || !plainHost(rest[:slash]) {
		return false
	}
	return plainURLPath(rest[slash:])
}

// plainURLPath reports whether path (starting with '/') holds only bytes of
// plainURLByte and neither "/." nor "//".
func plainURLPath(path []byte) bool {
	prev := byte(0)
	for _, c := range path {
		if !plainURLByte[c] || (prev == '/' && (c == '.' || c == '/')) {
			return false
		}
		prev = c
	}
	return true
}

// plainURLCache remembers the last plain URL seen, so that the many URLs of
// a list that share a long prefix with their predecessor are checked from
// where they differ on only.
type plainURLCache struct {
	last      []byte // the last plain URL seen
	pathStart int    // offset in last of its path's first '/'; 0 if none
}

// isPlain is isPlainHTTPURL(ref).
func (c *plainURLCache) isPlain(ref []byte) bool {
	if c.pathStart > 0 {
		// A prefix shared beyond the path's first '/' has the same plain
		// scheme and host, and the byte pairs in it are already checked.
		if n := commonPrefixLen(ref, c.last); n > c.pathStart {
			if !plainURLPath(ref[n-1:]) {
				return false
			}
			c.last = append(c.last[:0], ref...)
			return true
		}
	}
	if !isPlainHTTPURL(ref) {
		return false
	}
	c.last = append(c.last[:0], ref...)
	c.pathStart = bytes.Index(ref, []byte("://")) + 3
	c.pathStart += bytes.IndexByte(ref[c.pathStart:], '/')
	return true
}

// commonPrefixLen returns the length of the longest common prefix of a and b.
func commonPrefixLen(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := word(a, i) ^ word(b, i); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// plainHost reports whether h is a lower-case host name or IPv4 address,
// with an optional port of 1 to 5 digits (a test Source or an institution's
// server on 8080 is as plain as any).
func plainHost(h []byte) bool {
	if i := bytes.IndexByte(h, ':'); i >= 0 {
		port := h[i+1:]
		if len(port) == 0 || len(port) > 5 {
			return false
		}
		for _, c := range port {
			if c < '0' || c > '9' {
				return false
			}
		}
		h = h[:i]
	}
	if len(h) == 0 {
		return false
	}
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	return h[0] != '.' && h[0] != '-'
}

// plainURLByte marks the bytes net/url neither escapes nor interprets in a
// path or query.
var plainURLByte = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "-._~/=&+,;@?:" {
		t[c] = true
	}
	return t
}()
