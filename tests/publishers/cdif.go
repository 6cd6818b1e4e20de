package publishers

import (
	"bytes"
	"fmt"
	"time"
)

// CDIF publishes as the CDIF discovery profile's example does, as rsfs
// issue 39 reports it (written from that report, not from the profile's
// text): each document carries two top-level rs:md, one naming its
// capability and one dating it (at, completed), where ResourceSync has
// one. A Source Description at the well-known URI names one Capability
// List, which names one Resource List of n resources, each with its
// length, md5 hash and type.
type CDIF struct {
	*server
}

// NewCDIF starts the Source.
func NewCDIF(n int) (*CDIF, error) {
	s, err := newServer()
	if err != nil {
		return nil, err
	}
	c := &CDIF{server: s}
	root := s.URL()
	at := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	md := func(capability string) string {
		return `  <rs:md capability="` + capability + `"/>
  <rs:md at="` + at.Format(time.RFC3339) + `" completed="` + at.Add(time.Minute).Format(time.RFC3339) + `"/>
`
	}
	head := `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
`
	c.setDoc("/.well-known/resourcesync", []byte(head+md("description")+`  <url><loc>`+root+`/cdif/capabilitylist.xml</loc><rs:md capability="capabilitylist"/></url>
</urlset>
`))
	c.setDoc("/cdif/capabilitylist.xml", []byte(head+`  <rs:ln rel="up" href="`+root+`/.well-known/resourcesync"/>
`+md("capabilitylist")+`  <url><loc>`+root+`/cdif/resourcelist.xml</loc><rs:md capability="resourcelist"/></url>
</urlset>
`))
	var rl bytes.Buffer
	rl.WriteString(head + `  <rs:ln rel="up" href="` + root + `/cdif/capabilitylist.xml"/>
` + md("resourcelist"))
	for i := 0; i < n; i++ {
		path := fmt.Sprintf("/datasets/%03d.jsonld", i)
		body := []byte(fmt.Sprintf(`{"@id": %q}`+"\n", root+path))
		lastmod := at.Add(-time.Duration(i+1) * time.Hour)
		c.setFile(path, &File{Body: body, Lastmod: lastmod})
		fmt.Fprintf(&rl, "  <url><loc>%s%s</loc><lastmod>%s</lastmod><rs:md hash=\"md5:%s\" length=\"%d\" type=\"application/ld+json\"/></url>\n",
			root, path, lastmod.Format(time.RFC3339), md5hex(body), len(body))
	}
	rl.WriteString("</urlset>\n")
	c.setDoc("/cdif/resourcelist.xml", rl.Bytes())
	return c, nil
}

// State is what a mount must show.
func (c *CDIF) State() map[string]File { return c.state() }
