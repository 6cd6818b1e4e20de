package publishers

import (
	"bytes"
	"fmt"
	"sort"
	"sync"
	"time"
)

// ChangeLists is a Source that publishes Change Lists and nothing else:
// no Resource List, no dump. Such Sources exist where a Destination is
// meant to follow from the start: resydes' test Sources (a Capability
// List whose only capability is changelist), the NII NRID-style change
// lists, and Kanazawa Bunko's test set. Written from what the issue that
// asked for them (rsfs issue 39) reports of them, not from their code:
//
//   - Style "nii": a Source Description, a Capability List naming one
//     Change List, one rs:md per entry (change, length, hash), each change
//     dated by lastmod, from on the Change List.
//   - Style "kanazawa": the same documents, but each entry carries two
//     rs:md, one for hash, length and type and one for change, and the
//     Capability List names the Change List through a Change List Index
//     of one child.
//
// Every change goes into the one Change List (a resource changed twice is
// listed twice, oldest first), so its latest change says whether it exists.
type ChangeLists struct {
	*server
	clock clock
	style string

	mu      sync.Mutex
	changes []clChange
	bodies  map[string][]byte // path → body of the latest version
}

type clChange struct {
	path, change string
	at           time.Time
}

// NewChangeLists starts a Source of the given style ("nii", "kanazawa")
// whose Change List creates n resources, updates every third and deletes
// the last (when n > 1).
func NewChangeLists(style string, n int) (*ChangeLists, error) {
	if style != "nii" && style != "kanazawa" {
		return nil, fmt.Errorf("publishers: unknown Change List style %q", style)
	}
	s, err := newServer()
	if err != nil {
		return nil, err
	}
	c := &ChangeLists{server: s, style: style, bodies: map[string][]byte{}}
	// The history lies in the hour before now, a second apart.
	at := time.Now().Add(-time.Hour).Truncate(time.Second)
	past := func() time.Time { at = at.Add(time.Second); return at }
	for i := 0; i < n; i++ {
		c.record(fmt.Sprintf("/items/%04d.xml", i), "created", nil, past())
	}
	for i := 0; i < n; i += 3 {
		c.record(fmt.Sprintf("/items/%04d.xml", i), "updated", nil, past())
	}
	if n > 1 {
		c.record(fmt.Sprintf("/items/%04d.xml", n-1), "deleted", nil, past())
	}
	c.publish()
	return c, nil
}

// ChangeListURL is the URL of the Change List (a child of the index in
// the "kanazawa" style).
func (c *ChangeLists) ChangeListURL() string { return c.URL() + "/rs/changelist.xml" }

// CapabilityListURL is the URL of the Capability List.
func (c *ChangeLists) CapabilityListURL() string { return c.URL() + "/rs/capabilitylist.xml" }

// Create publishes a new resource at path with body.
func (c *ChangeLists) Create(path string, body []byte) { c.change(path, "created", body) }

// Update publishes a new version of the resource at path.
func (c *ChangeLists) Update(path string, body []byte) { c.change(path, "updated", body) }

// Delete deletes the resource at path.
func (c *ChangeLists) Delete(path string) { c.change(path, "deleted", nil) }

func (c *ChangeLists) change(path, change string, body []byte) {
	c.record(path, change, body, c.clock.now())
	c.publish()
}

// record adds a change at at; a created or updated resource without a
// body is given one naming its version.
func (c *ChangeLists) record(path, change string, body []byte, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.changes = append(c.changes, clChange{path: path, change: change, at: at})
	switch {
	case change == "deleted":
		delete(c.bodies, path)
	case body == nil:
		c.bodies[path] = []byte(fmt.Sprintf("<record path=%q version=%q/>\n", path, at.Format(time.RFC3339)))
	default:
		c.bodies[path] = bytes.Clone(body)
	}
}

// publish renders the documents and resources from the changes.
func (c *ChangeLists) publish() {
	root := c.URL()
	c.mu.Lock()
	changes := append([]clChange(nil), c.changes...)
	bodies := make(map[string][]byte, len(c.bodies))
	for p, b := range c.bodies {
		bodies[p] = b
	}
	c.mu.Unlock()
	latest := map[string]time.Time{}
	for _, ch := range changes {
		latest[ch.path] = ch.at
	}
	for _, ch := range changes {
		if ch.change == "deleted" {
			c.setFile(ch.path, nil)
		}
	}
	for p, b := range bodies {
		c.setFile(p, &File{Body: b, Lastmod: latest[p]})
	}
	c.setDoc("/.well-known/resourcesync", []byte(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="description"/>
  <url><loc>`+root+`/rs/capabilitylist.xml</loc><rs:md capability="capabilitylist"/></url>
</urlset>
`))
	named := root + "/rs/changelist.xml"
	if c.style == "kanazawa" {
		named = root + "/rs/changelist-index.xml"
		c.setDoc("/rs/changelist-index.xml", []byte(`<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="`+root+`/rs/capabilitylist.xml"/>
  <rs:md capability="changelist" from="`+from(changes)+`"/>
  <sitemap><loc>`+root+`/rs/changelist.xml</loc><rs:md capability="changelist" from="`+from(changes)+`"/></sitemap>
</sitemapindex>
`))
	}
	c.setDoc("/rs/capabilitylist.xml", []byte(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="`+root+`/.well-known/resourcesync"/>
  <rs:md capability="capabilitylist"/>
  <url><loc>`+named+`</loc><rs:md capability="changelist"/></url>
</urlset>
`))
	c.setDoc("/rs/changelist.xml", c.changeList(root, changes, bodies))
}

// from is the Change List's from: its first change's time.
func from(changes []clChange) string {
	if len(changes) == 0 {
		return "1970-01-01T00:00:00Z"
	}
	return changes[0].at.UTC().Format(time.RFC3339)
}

func (c *ChangeLists) changeList(root string, changes []clChange, bodies map[string][]byte) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="` + root + `/rs/capabilitylist.xml"/>
  <rs:md capability="changelist" from="` + from(changes) + `"/>
`)
	// The body a change published is the latest one only for the latest
	// change of its resource; an older one names no length nor hash.
	last := map[string]int{}
	for i, ch := range changes {
		last[ch.path] = i
	}
	for i, ch := range changes {
		at := ch.at.UTC().Format(time.RFC3339)
		body, current := bodies[ch.path]
		fixity := ""
		if current && last[ch.path] == i {
			fixity = fmt.Sprintf(` hash="md5:%s" length="%d" type="application/xml"`, md5hex(body), len(body))
		}
		switch {
		case c.style == "kanazawa" && fixity != "":
			fmt.Fprintf(&b, "  <url>\n    <loc>%s%s</loc>\n    <lastmod>%s</lastmod>\n    <rs:md%s/>\n    <rs:md change=%q/>\n  </url>\n",
				root, ch.path, at, fixity, ch.change)
		default:
			fmt.Fprintf(&b, "  <url>\n    <loc>%s%s</loc>\n    <lastmod>%s</lastmod>\n    <rs:md change=%q%s/>\n  </url>\n",
				root, ch.path, at, ch.change, fixity)
		}
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// State is what a mount must show: every resource whose latest change is
// a creation or an update, dated by it.
func (c *ChangeLists) State() map[string]File { return c.state() }

// Paths returns the paths of the resources that exist, sorted.
func (c *ChangeLists) Paths() []string {
	st := c.state()
	out := make([]string, 0, len(st))
	for p := range st {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
