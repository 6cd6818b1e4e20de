package publishers

import (
	"archive/zip"
	"bytes"
	"fmt"
	"time"
)

// ResyncClientDump publishes a Resource Dump as resync-client's dump
// fixture has it (CDLUC3/resync-client, spec/data/resourcedump/:
// resourcedump.xml, manifest.xml): the Resource Dump given as the URL,
// with no Resource List; its rs:md has at 2015-05-22T16:06:04Z and
// completed 2015-05-05T16:23:20Z, earlier (an inverted range), and so
// has its one entry; the package's manifest is dated at
// 2015-05-05T16:19:25Z, before the dump's at, and lists res1 and res2 with
// lastmods of 2015-05-22, md5 hashes and paths under /resources/, and no
// lengths. Written from the fixture's documents, with this server's URLs
// and bodies of its own (the fixture's hashes are of its own bytes).
type ResyncClientDump struct {
	*server
	files map[string]File
}

// NewResyncClientDump starts the Source.
func NewResyncClientDump() (*ResyncClientDump, error) {
	s, err := newServer()
	if err != nil {
		return nil, err
	}
	d := &ResyncClientDump{server: s, files: map[string]File{}}
	root := s.URL()
	res := []struct {
		name    string
		lastmod time.Time
	}{
		{"res1", time.Date(2015, 5, 22, 16, 14, 55, 0, time.UTC)},
		{"res2", time.Date(2015, 5, 22, 16, 16, 4, 0, time.UTC)},
	}
	var man bytes.Buffer
	man.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="resourcedump-manifest"
         at="2015-05-05T16:19:25Z"/>
`)
	var pkg bytes.Buffer
	zw := zip.NewWriter(&pkg)
	for _, r := range res {
		body := []byte(fmt.Sprintf("the bytes of %s\n", r.name))
		d.files["/"+r.name] = File{Body: body, Lastmod: r.lastmod}
		fmt.Fprintf(&man, `  <url>
    <loc>%s/%s</loc>
    <lastmod>%s</lastmod>
    <rs:md hash="md5:%s"
           path="/resources/%s"/>
  </url>
`, root, r.name, r.lastmod.Format(time.RFC3339), md5hex(body), r.name)
		w, err := zw.Create("resources/" + r.name)
		if err == nil {
			_, err = w.Write(body)
		}
		if err != nil {
			panic(err) // writing to memory
		}
	}
	man.WriteString("</urlset>\n")
	w, err := zw.Create("manifest.xml")
	if err == nil {
		_, err = w.Write(man.Bytes())
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		panic(err)
	}
	d.setBlob("/resourcedump.zip", File{Body: pkg.Bytes(), Lastmod: time.Date(2015, 5, 22, 16, 6, 4, 0, time.UTC)})
	d.setDoc("/resourcedump.xml", []byte(fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up"
         href="%s/capabilitylist.xml"/>
  <rs:md capability="resourcedump"
         at="2015-05-22T16:06:04Z"
         completed="2015-05-05T16:23:20Z"/>
  <url>
    <loc>%s/resourcedump.zip</loc>
    <rs:md type="application/zip"
           length="%d"
           at="2015-05-22T16:06:04Z"
           completed="2015-05-05T16:23:20Z"/>
  </url>
 </urlset>
`, root, root, pkg.Len())))
	return d, nil
}

// DumpURL is the Resource Dump's URL, to mount.
func (d *ResyncClientDump) DumpURL() string { return d.URL() + "/resourcedump.xml" }

// State is what a mount must show.
func (d *ResyncClientDump) State() map[string]File { return d.files }
