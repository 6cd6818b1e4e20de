package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode/utf8"

	"rsfs/origin"
)

// Path mapping: where a resource appears in the tree.
//
// Every resource appears at exactly one path, chosen from its URI alone, so
// a URI listed in several resource sets (Capability Lists) is one file and
// the tree is the same whatever order the lists are read in.
//
//  1. Origin. A resource on the Source's origin (scheme, host and port,
//     compared after lower-casing scheme and host and dropping a default
//     port: 80 for http, 443 for https) maps by its URI path. A resource on any
//     other origin maps under a top-level directory named "@host", or
//     "@host:port" when the port is not the scheme's default; user info is
//     dropped. The scheme is not part of the name: http and https on one
//     other host share its directory (rule 7 separates equal paths). A URI
//     without an authority (urn:x:y) maps under "@scheme:".
//     http://src.example/a/b        → a/b            (Origin http://src.example)
//     http://localhost:8080/x       → @localhost:8080/x
//     https://Mirror.example:443/y  → @mirror.example/y
//  2. Segments. Dot segments are removed as in RFC 3986 section 5.2.4, then the
//     path is split on "/" and empty segments are dropped. Each segment is
//     percent-decoded except %2F, %25 and the control characters (%00 to
//     %1F, and %7F), which stay encoded (written upper-case), so a name
//     never holds "/", NUL, a newline or any other control character, and
//     decoding is unambiguous. A control character written raw in the URI
//     is escaped the same way. A segment that decodes to "." or ".." is
//     written %2E or %2E%2E. An invalid escape stays as written. Bytes that
//     are not UTF-8 are kept.
//     /a/./b/../c        → a/c
//     /a//b              → a/b
//     /my%20file.txt     → "my file.txt"
//     /a%2fb             → a%2Fb
//     /a%0Ab%0d          → a%0Ab%0D
//     /%2E%2E/x          → %2E%2E/x
//  3. Query and fragment. A query string is kept, as published, on the last
//     name, with any "/" in it written %2F (and a control character %XX,
//     as in rule 2). A fragment is dropped.
//     /q.cgi?id=1        → q.cgi?id=1
//     /q?p=a/b#top       → q?p=a%2Fb
//  4. Trailing slash. A URI whose path ends in "/" (the origin root included)
//     is the file "_index" in that directory; a query follows it.
//     /docs/             → docs/_index
//     /                  → _index
//     /docs/?page=2      → docs/_index?page=2
//  5. File and directory. When a name is needed both as a file and as a
//     directory, the directory wins and the file is "_index" inside it.
//     /a and /a/b        → a/_index and a/b
//  6. Long names. A name longer than 255 bytes is cut at a UTF-8 boundary and
//     given the suffix "~" plus the first 10 hex digits of the SHA-256 of the
//     whole name, 255 bytes at most in all.
//     /xxx…(300 bytes)   → xxx…(244 bytes)~<10 hex digits of sha256(name)>
//  7. Collisions. When different URIs come to one path (by rules 2 to 6, or a
//     name equal to another's suffixed name), the URI that sorts first
//     (bytewise) keeps the path and every other gets "~" plus the first 10
//     hex digits of the SHA-256 of its URI appended to its name (the name is
//     cut first if needed to stay within 255 bytes; should that still be
//     taken, the digest of URI+"\x00"+"1", "2", … is used). The result does not
//     depend on the order resources were added. While mounted, existing paths
//     never move: a resource created later whose path is taken gets the
//     suffix whatever its URI, and a directory it needs whose name is already
//     a file is named with the suffix "~" plus the digest of the directory
//     name.
//     /aA and /a%41      → aA (for /a%41) and aA~<sha256("…/aA")[:10]>
//     /a and /a/         → a/_index (for /a) and a/_index~<…>
//  8. Resource sets. The path depends on the URI only: a URI listed in two
//     Capability Lists is one file.
//  9. Web URIs. Only http and https URIs reach the catalog from a
//     ResourceSync Source: package source leaves any other <loc> (file:,
//     javascript:, urn:...) out of the tree (source/weblocs.go), with one
//     warning per document. The "@scheme:" directory of rule 1 is this
//     mapping's answer for such a URI, never used by a mount.

const (
	// NameMax is the longest name a path segment may have, in bytes.
	NameMax = 255
	// IndexName is the file name of a resource whose URI path ends in "/".
	IndexName = "_index"
	// digestSuffixLen is the length of "~" plus 10 hex digits.
	digestSuffixLen = 11
)

// uriParts is a URI split at the boundaries the mapping needs.
type uriParts struct {
	scheme    string
	authority string // without "//"; empty for a URI without one
	hasAuth   bool
	path      string
	query     string // with its "?", or empty
}

// parseURI splits an absolute URI. It never fails: anything it cannot
// recognise is treated as a path.
func parseURI(uri string) uriParts {
	var p uriParts
	rest := uri
	if i := strings.IndexByte(rest, ':'); i > 0 && validScheme(rest[:i]) {
		p.scheme, rest = rest[:i], rest[i+1:]
	}
	if strings.HasPrefix(rest, "//") {
		rest = rest[2:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		p.authority, p.hasAuth, rest = rest[:end], true, rest[end:]
	}
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest, p.query = rest[:i], rest[i:]
	}
	p.path = rest
	return p
}

func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// splitURI cuts a URI after the last "/" of its path: the prefix is shared by
// the resources of one directory, the suffix is the last segment with its
// query and fragment.
func splitURI(uri string) (prefix, suffix string) {
	pathStart := 0
	if i := strings.Index(uri, "://"); i > 0 && strings.IndexByte(uri, ':') == i {
		pathStart = i + 3
		pathStart += indexAny3(uri[pathStart:], '/', '?', '#')
	} else if i := strings.IndexByte(uri, ':'); i > 0 && validScheme(uri[:i]) {
		pathStart = i + 1
	}
	pathEnd := pathStart + indexAny3(uri[pathStart:], '?', '#', '#')
	if j := strings.LastIndexByte(uri[pathStart:pathEnd], '/'); j >= 0 {
		cut := pathStart + j + 1
		return uri[:cut], uri[cut:]
	}
	return uri[:pathStart], uri[pathStart:]
}

// indexAny3 is the index in s of the first of a, b or c, or len(s): a
// loop, where strings.IndexAny builds a set at every call.
func indexAny3(s string, a, b, c byte) int {
	for i := 0; i < len(s); i++ {
		if x := s[i]; x == a || x == b || x == c {
			return i
		}
	}
	return len(s)
}

// normalizeOrigin returns a catalog's origin in the canonical form of
// package origin, which the mapping compares URIs' origins with. A value
// with a path keeps only the origin; one without an authority is kept.
func normalizeOrigin(o string) string {
	p := parseURI(o)
	if !p.hasAuth {
		return o
	}
	o, _ = origin.FromAuthority(p.scheme, p.authority)
	return o
}

// dirSegments maps the directory part of a URI (a prefix from splitURI, or
// any URI whose last segment is to be ignored) to its directory names.
// home is the catalog's origin, normalised.
func dirSegments(home, prefix string) []string {
	p := parseURI(prefix)
	var segs []string
	if p.hasAuth {
		o, hostPort := origin.FromAuthority(p.scheme, p.authority)
		if o != home {
			segs = append(segs, "@"+escapeControls(hostPort))
		}
	} else {
		segs = append(segs, "@"+strings.ToLower(p.scheme)+":")
	}
	path := removeDotSegments(p.path)
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		path = path[:i]
	} else {
		path = ""
	}
	for _, s := range strings.Split(path, "/") {
		if s != "" {
			segs = append(segs, fitName(decodeSegment(s)))
		}
	}
	return segs
}

// isDotSegment reports whether a suffix's path part is "." or "..", which
// makes its directory differ from its prefix's.
func isDotSegment(suffix string) bool {
	seg := suffix
	if i := strings.IndexAny(seg, "?#"); i >= 0 {
		seg = seg[:i]
	}
	return seg == "." || seg == ".."
}

// fileName maps the suffix of a URI (from splitURI) to its file name, before
// the file-and-directory and collision rules. A dot-segment suffix names the
// index file of a directory (see isDotSegment).
func fileName(suffix string) string {
	seg, query := suffix, ""
	if i := strings.IndexByte(seg, '#'); i >= 0 {
		seg = seg[:i]
	}
	if i := strings.IndexByte(seg, '?'); i >= 0 {
		seg, query = seg[:i], seg[i:]
	}
	name := IndexName
	if seg != "" && seg != "." && seg != ".." {
		name = decodeSegment(seg)
	}
	if query != "" {
		name += escapeQuery(query)
	}
	return fitName(name)
}

// escapeQuery writes the bytes a name must not hold ("/" and the control
// characters) as escapes.
func escapeQuery(q string) string {
	if !strings.Contains(q, "/") && !hasControl(q) {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	for i := 0; i < len(q); i++ {
		if c := q[i]; c == '/' || isControl(c) {
			writeEscape(&b, c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// isControl reports whether c is a C0 control character or DEL, which a
// name holds only escaped (rules 2 and 3): a newline in a name would break
// every script that reads file names a line each.
func isControl(c byte) bool { return c < 0x20 || c == 0x7f }

// hasControl reports whether s holds a control character.
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if isControl(s[i]) {
			return true
		}
	}
	return false
}

// escapeControls writes the control characters of s as escapes.
func escapeControls(s string) string {
	if !hasControl(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		if c := s[i]; isControl(c) {
			writeEscape(&b, c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// writeEscape writes c as %XX, upper-case.
func writeEscape(b *strings.Builder, c byte) {
	const hexDigits = "0123456789ABCDEF"
	b.WriteByte('%')
	b.WriteByte(hexDigits[c>>4])
	b.WriteByte(hexDigits[c&15])
}

// MapURI returns the path a URI maps to by rules 1 to 4 and 6, before the
// file-and-directory (5) and collision (7) rules, which depend on the other
// resources. origin must be in the canonical form of package origin.
func MapURI(origin, uri string) []string {
	prefix, suffix := splitURI(uri)
	if isDotSegment(suffix) {
		q := ""
		if i := strings.IndexAny(suffix, "?#"); i >= 0 {
			q = suffix[i:]
		}
		seg := suffix[:len(suffix)-len(q)]
		return append(dirSegments(origin, prefix+seg+"/"), fileName(q))
	}
	return append(dirSegments(origin, prefix), fileName(suffix))
}

// removeDotSegments is RFC 3986 section 5.2.4.
func removeDotSegments(in string) string {
	if !strings.Contains(in, ".") {
		return in
	}
	var out []string // output segments, each with its leading "/" when it had one
	for in != "" {
		switch {
		case strings.HasPrefix(in, "../"):
			in = in[3:]
		case strings.HasPrefix(in, "./"):
			in = in[2:]
		case strings.HasPrefix(in, "/./"):
			in = in[2:]
		case in == "/.":
			in = "/"
		case strings.HasPrefix(in, "/../"):
			in = in[3:]
			out = dropLast(out)
		case in == "/..":
			in = "/"
			out = dropLast(out)
		case in == "." || in == "..":
			in = ""
		default:
			end := strings.IndexByte(in[1:], '/')
			if end < 0 {
				end = len(in)
			} else {
				end++
			}
			out = append(out, in[:end])
			in = in[end:]
		}
	}
	return strings.Join(out, "")
}

func dropLast(s []string) []string {
	if len(s) > 0 {
		return s[:len(s)-1]
	}
	return s
}

// decodeSegment percent-decodes a path segment by rule 2.
func decodeSegment(s string) string {
	if strings.IndexByte(s, '%') < 0 && !hasControl(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isControl(c) {
			writeEscape(&b, c)
			continue
		}
		if c != '%' || i+2 >= len(s) {
			b.WriteByte(c)
			continue
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			b.WriteByte(c)
			continue
		}
		switch v := hi<<4 | lo; {
		case v == '/' || v == '%' || isControl(v):
			writeEscape(&b, v)
		default:
			b.WriteByte(v)
		}
		i += 2
	}
	out := b.String()
	switch out {
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	return out
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// fitName applies rule 6 to a name longer than NameMax.
func fitName(name string) string {
	if len(name) <= NameMax {
		return name
	}
	return cutUTF8(name, NameMax-digestSuffixLen) + "~" + digest10(name)
}

// suffixName applies rule 7: name with "~" and the digest of uri (attempt 0)
// or of uri+"\x00"+attempt, within NameMax.
func suffixName(name, key string, attempt int) string {
	if attempt > 0 {
		key += "\x00" + strconv.Itoa(attempt)
	}
	return cutUTF8(name, NameMax-digestSuffixLen) + "~" + digest10(key)
}

// cutUTF8 shortens s to at most n bytes without splitting a UTF-8 sequence.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for back := 0; back < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(s[cut]); back++ {
		cut--
	}
	if !utf8.RuneStart(s[cut]) { // not UTF-8 here: any cut will do
		cut = n
	}
	return s[:cut]
}

func digest10(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:5])
}
