package fs

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	"rsfs/catalog"
)

// Every link the Source published about a resource is an extended
// attribute: user.<protocol>.link.<rel>, its hrefs one per line in
// document order, and, where one of them carries a type, a modified time,
// a length, a hash or a pri, user.<protocol>.link.<rel>.json, a JSON array
// of all that relation's links with those fields. A relation that is a
// URI is named by its last segment
// (http://www.openarchives.org/rs/terms/patch → patch); a registered one
// in lower case. Links rsfs adds for itself (catalog.InternalRelPrefix)
// are not shown.
const (
	nameLinkPrefix = "link."
	linkJSONSuffix = ".json"
	// xattrValueMax is the largest value Linux hands out (XATTR_SIZE_MAX);
	// links past it are left out of the attribute.
	xattrValueMax = 64 << 10
	// xattrNameMax is the longest name Linux accepts (XATTR_NAME_MAX).
	xattrNameMax = 255
)

// linkJSON is one link in a .json attribute.
type linkJSON struct {
	Href     string `json:"href"`
	Type     string `json:"type,omitempty"`
	Modified string `json:"modified,omitempty"`
	Length   *int64 `json:"length,omitempty"`
	Hash     string `json:"hash,omitempty"`
	Pri      int    `json:"pri,omitempty"`
}

// linkXattrs returns the link attributes of links, names without the
// protocol's prefix, sorted by name.
func linkXattrs(links []catalog.Link) []xattr {
	type group struct {
		hrefs  []string
		links  []linkJSON
		detail bool
		size   int
	}
	groups := map[string]*group{}
	for i := range links {
		l := &links[i]
		if l.Href == "" || strings.HasPrefix(l.Rel, catalog.InternalRelPrefix) {
			continue
		}
		rel := catalog.RelName(l.Rel)
		if rel == "" {
			continue
		}
		g := groups[rel]
		if g == nil {
			g = &group{}
			groups[rel] = g
		}
		if g.size+len(l.Href)+1 > xattrValueMax {
			continue
		}
		g.size += len(l.Href) + 1
		g.hrefs = append(g.hrefs, l.Href)
		hashes := make([]string, len(l.Hashes))
		for i, h := range l.Hashes {
			hashes[i] = h.String()
		}
		j := linkJSON{Href: l.Href, Type: l.Type, Hash: strings.Join(hashes, " "), Pri: l.Pri}
		if !l.Modified.IsZero() {
			j.Modified = l.Modified.UTC().Format(time.RFC3339Nano)
		}
		if l.Length >= 0 { // resourcesync.NoLength is -1
			n := l.Length
			j.Length = &n
		}
		if j.Type != "" || j.Modified != "" || j.Length != nil || j.Hash != "" || j.Pri != 0 {
			g.detail = true
		}
		g.links = append(g.links, j)
	}
	names := slices.Sorted(maps.Keys(groups))
	out := make([]xattr, 0, 2*len(names))
	for _, rel := range names {
		g := groups[rel]
		name := nameLinkPrefix + rel
		out = append(out, xattr{name, strings.Join(g.hrefs, "\n")})
		if !g.detail {
			continue
		}
		js := g.links
		for {
			b, err := json.Marshal(js)
			if err == nil && len(b) <= xattrValueMax {
				out = append(out, xattr{name + linkJSONSuffix, string(b)})
				break
			}
			if err != nil || len(js) <= 1 {
				break
			}
			js = js[:len(js)/2]
		}
	}
	return out
}
