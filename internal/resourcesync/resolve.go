package resourcesync

import (
	"bytes"
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

// plainURLCache remembers the directory of the last plain URL seen, so that
// the many URLs of a list that share it are checked from there on only.
type plainURLCache struct{ dir []byte }

// isPlain is isPlainHTTPURL(ref).
func (c *plainURLCache) isPlain(ref []byte) bool {
	if len(c.dir) > 0 && bytes.HasPrefix(ref, c.dir) {
		return plainURLPath(ref[len(c.dir)-1:])
	}
	if !isPlainHTTPURL(ref) {
		return false
	}
	c.dir = append(c.dir[:0], ref[:bytes.LastIndexByte(ref, '/')+1]...)
	return true
}

func plainHost(h []byte) bool {
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
