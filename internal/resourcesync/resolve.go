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
	path := rest[slash:]
	if bytes.Contains(path, []byte("/.")) || bytes.Contains(path, []byte("//")) {
		return false
	}
	for _, c := range path {
		if !plainURLByte[c] {
			return false
		}
	}
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
