package sourcetest

import (
	"fmt"
	"net/url"
	"strings"
)

// A resource is routed by its key: the request target as sent (escaped path
// and query), brought into one canonical form so that equivalent spellings
// of a percent-encoding meet: hex digits in upper case, and escapes of
// unreserved characters decoded. Everything else (dot segments, %2F, a
// trailing slash, the query) is kept exactly.

// canonicalKey returns the canonical form of a request target.
func canonicalKey(target string) string {
	if !strings.Contains(target, "%") {
		return target
	}
	var b strings.Builder
	for i := 0; i < len(target); i++ {
		c := target[i]
		if c != '%' || i+2 >= len(target) || !isHex(target[i+1]) || !isHex(target[i+2]) {
			b.WriteByte(c)
			continue
		}
		v := unhex(target[i+1])<<4 | unhex(target[i+2])
		if isUnreserved(v) {
			b.WriteByte(v)
		} else {
			fmt.Fprintf(&b, "%%%02X", v)
		}
		i += 2
	}
	return b.String()
}

// requestKey returns the canonical key of an incoming request.
func requestKey(target string) string {
	if !strings.HasPrefix(target, "/") {
		if u, err := url.Parse(target); err == nil {
			target = u.RequestURI()
		}
	}
	return canonicalKey(target)
}

// keyPath is the key without its query.
func keyPath(key string) string {
	if i := strings.IndexByte(key, '?'); i >= 0 {
		return key[:i]
	}
	return key
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// removeDotSegments resolves "." and ".." segments in a key's path as
// RFC 3986 section 5.2.4 does, keeping the query and every other byte.
func removeDotSegments(key string) string {
	p, query, hasQuery := strings.Cut(key, "?")
	if !strings.Contains(p, ".") {
		return key
	}
	segs := strings.Split(p, "/")
	out := make([]string, 0, len(segs))
	for i, seg := range segs {
		last := i == len(segs)-1
		switch seg {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, seg)
		}
	}
	p = strings.Join(out, "/")
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if hasQuery {
		return p + "?" + query
	}
	return p
}
