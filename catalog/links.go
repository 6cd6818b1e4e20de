package catalog

import "strings"

// RelName is the name a link relation has in a file's extended attributes
// (user.<protocol>.link.<name>, served by fs): a relation that is a URI is
// named by its last path segment or fragment
// (http://www.openarchives.org/rs/terms/patch → patch), a registered one
// in lower case (RFC 8288 compares them case-insensitively); "" for a
// relation that cannot name an attribute.
func RelName(rel string) string {
	rel = strings.TrimSpace(rel)
	if isURIRel(rel) {
		rel = strings.TrimRight(rel, "/#")
		if i := strings.LastIndexAny(rel, "/#:"); i >= 0 {
			rel = rel[i+1:]
		}
	} else {
		rel = strings.ToLower(rel)
	}
	if rel == "" || strings.ContainsAny(rel, "\x00 \t\n\r") {
		return ""
	}
	return rel
}

// isURIRel reports whether rel is an extension relation, a URI (RFC 8288
// §2.1.2): a scheme followed by ':'.
func isURIRel(rel string) bool {
	i := strings.IndexByte(rel, ':')
	if i <= 0 {
		return false
	}
	for j := 0; j < i; j++ {
		c := rel[j]
		letter := 'a' <= c|0x20 && c|0x20 <= 'z'
		if !letter && (j == 0 || !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}
