package source

import (
	"log/slog"
	"strings"
)

// isWebLoc reports whether a <loc> is an http or https URI: the only
// resources a Destination can read. Others (file:, javascript:, gopher:,
// urn:, ...) are left out of the tree.
func isWebLoc(loc string) bool {
	i := strings.IndexByte(loc, ':')
	if i < 0 {
		return false
	}
	scheme := strings.ToLower(loc[:i])
	return (scheme == "http" || scheme == "https") && strings.HasPrefix(loc[i+1:], "//")
}

// NonWebLocs counts the entries of one document whose <loc> is not http
// or https, to say so in one warning: loading and following (package
// changes) both leave them out. The zero value is ready to use.
type NonWebLocs struct {
	n       int
	example string
}

// Skip reports whether loc is to be left out, and counts it.
func (k *NonWebLocs) Skip(loc string) bool {
	if isWebLoc(loc) {
		return false
	}
	if k.n == 0 {
		k.example = loc
	}
	k.n++
	return true
}

// Warn says, once for the document, how many entries were left out.
func (k *NonWebLocs) Warn(log *slog.Logger, doc string) {
	if k.n == 0 {
		return
	}
	example := k.example
	if len(example) > 200 {
		example = example[:200] + "…"
	}
	log.Warn("entries whose <loc> is not an http or https URI are left out of the tree", "document", doc, "entries", k.n, "example", example)
}
