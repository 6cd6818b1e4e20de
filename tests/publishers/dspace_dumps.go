package publishers

import (
	"archive/zip"
	"bytes"
	"fmt"
	"time"
)

// DSpace's dumps, with resourcedump.enable = true (DSpaceResourceDump,
// DSpaceResourceDumpZip, DSpaceChangeDump, DSpaceChangeDumpZip): the
// packages' members and the manifests' paths begin with a slash
// (getPath: separator + "resources" + ...); the manifest is the package's
// last member; a Change Dump's manifest is a Resource List of the run's
// items (capability changedump-manifest, no change attributes, a withdrawn
// item's resources listed like the others, removed bitstreams left out), so
// a run with nothing to dump writes an empty manifest; and the Capability
// List names the Change Dump's package itself, capability "changedump".

func bitstreamPath(it *dspaceItem) string {
	return fmt.Sprintf("/resources/123456789_%d/%d_article.txt", it.n, it.version+1)
}

func metadataPath(it *dspaceItem, format string) string {
	return fmt.Sprintf("/resources/123456789_%d/%s", it.n, format)
}

func pathAttr(inDump bool, p string) string {
	if !inDump {
		return ""
	}
	return `path="` + p + `" `
}

// dumpZip writes the members of items, in the order the manifest lists
// them, then the manifest.
func (d *DSpace) dumpZip(items []*dspaceItem, manifest []byte, made time.Time) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name string, body []byte) {
		f, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: made})
		if err == nil {
			_, err = f.Write(body)
		}
		if err != nil {
			panic(err) // writing to memory
		}
	}
	for _, it := range items {
		add(bitstreamPath(it), d.bitstreamBody(it))
		for _, f := range []string{"qdc", "mets"} {
			add(metadataPath(it, f), d.metadata(it, f))
		}
	}
	add("manifest.xml", manifest)
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// dumpManifest is DSpaceResourceList.serialise with dump set: a Resource
// List of items, with paths, dated by from.
func (d *DSpace) dumpManifest(capability string, items []*dspaceItem, now time.Time) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="` + capability + `" from="` + dspaceDate(now) + `" />
  <rs:ln rel="up" href="` + d.url("capabilitylist.xml") + `" />
`)
	for _, it := range items {
		d.writeItemIn(&b, it, "", "never", true)
	}
	b.WriteString("</sm:urlset>\n")
	return b.Bytes()
}

// resourceDump is DSpaceResourceDump.serialise: resourcedump.zip and the
// Resource Dump naming it.
func (d *DSpace) resourceDump(now time.Time) {
	var items []*dspaceItem
	for _, it := range d.byLastmod(d.items) {
		if !it.withdrawn {
			items = append(items, it)
		}
	}
	pkg := d.dumpZip(items, d.dumpManifest("resourcedump-manifest", items, now), now)
	d.setBlob(dspaceBase+"resourcedump.zip", File{Body: pkg, Lastmod: now})
	d.setDoc(dspaceBase+"resourcedump.xml", []byte(fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="resourcedump" from="%s" />
  <rs:ln rel="up" href="%s" />
  <sm:url>
    <sm:loc>%s</sm:loc>
    <sm:lastmod>%s</sm:lastmod>
    <rs:md length="%d" type="application/zip" />
  </sm:url>
</sm:urlset>
`, dspaceDate(now), d.url("capabilitylist.xml"), d.url("resourcedump.zip"), dspaceDate(now), len(pkg))))
}

// changeDumpRun is DSpaceChangeDump.serialiseChangeDump: the run's items
// (each once per event, as DSpaceResourceList.serialise adds them) in a
// changedump_yyyy-MM-dd-HHmmss.zip.
func (d *DSpace) changeDumpRun(now time.Time, events []dspaceEvent) {
	var items []*dspaceItem
	for _, e := range events {
		if e.item != nil {
			items = append(items, e.item)
		}
	}
	items = d.byLastmod(items)
	name := "changedump_" + now.In(eastern).Format("2006-01-02-150405") + ".zip"
	pkg := d.dumpZip(items, d.dumpManifest("changedump-manifest", items, now), now)
	d.setBlob(dspaceBase+name, File{Body: pkg, Lastmod: now})
	d.changeDump = name
}
