package publishers

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// DSpace publishes as DSpace's ResourceSync module does (DSpace/
// DSpaceResourceSync: ResourceSyncGenerator's init and update,
// DSpaceResourceDocument, DSpaceChangeList, DSpaceChangeListArchive,
// UrlManager, FileNames; the XML is DSpace/ResourceSyncJava's
// ResourceSyncDocument.getElement and ResourceSyncEntry.getElement, written
// by JDOM's pretty format).
//
// What that code writes: every element in the prefixed sitemap namespace
// (sm:urlset, sm:url, sm:loc); times by SimpleDateFormat
// "yyyy-MM-dd'T'HH:mm:ss'Z'" in the server's local zone, so a literal Z on
// local time (here US Eastern, five hours behind UTC); a Resource List
// dated by from, not at; entries in lastmod order, the undated ones (a
// removed bitstream's deletion) first; a capability "changelistindex" for
// the Change List archive, and a sourcedescriptionindex.xml. Each update
// run writes a new changelist_yyyy-MM-dd-HHmmss.xml from the last one's
// date until now, and the regenerated Capability List names only it.
//
// Configuration: capabilitylists = site, the default metadata formats (qdc,
// mets), resourcedump.enable = false, resourcedump.onlymetadata = false (so
// bitstreams are listed, with their md5).
type DSpace struct {
	*server
	clock clock

	mu       sync.Mutex
	items    []*dspaceItem
	nextBits int
	lastCL   time.Time // the date in the newest changelist_*.xml's name
	events   []dspaceEvent
	history  []dspaceEvent // every event recorded, for a rebase

	dumps      bool   // resourcedump.enable
	changeDump string // the newest changedump_*.zip, once an update made one
}

type dspaceItem struct {
	n         int // handle 123456789/n
	bitstream int
	lastmod   time.Time
	version   int
	withdrawn bool
}

// dspaceEvent is what ResourceSyncConsumer records between runs.
type dspaceEvent struct {
	item      *dspaceItem
	change    string // created, updated, deleted
	bitstream int    // a removed bitstream (change deleted, item nil)
}

// eastern is the DSpace server's local zone.
var eastern = time.FixedZone("EST", -5*3600)

// dspaceDate is ResourceSync.DATE_FORMAT: local time with a literal Z.
func dspaceDate(t time.Time) string { return t.In(eastern).Format("2006-01-02T15:04:05") + "Z" }

// asWritten is the instant a reader takes dspaceDate(t) for.
func asWritten(t time.Time) time.Time {
	w, _ := time.Parse(time.RFC3339, dspaceDate(t))
	return w
}

const dspaceBase = "/dspace-resourcesync/"

// NewDSpace starts a DSpace Source with n items, as `ResourceSyncGenerator
// -i` leaves it: the Source Description and its index, the Capability
// List, the Resource List and a blank Change List the Capability List does
// not name yet. With dumps (resourcedump.enable), also a Resource Dump,
// and each update run writes a Change Dump (dspace_dumps.go).
func NewDSpace(n int, dumps bool) (*DSpace, error) {
	s, err := newServer()
	if err != nil {
		return nil, err
	}
	d := &DSpace{server: s, dumps: dumps}
	base := time.Now().Add(-2 * time.Hour).Truncate(time.Second)
	for i := 0; i < n; i++ {
		d.nextBits++
		d.items = append(d.items, &dspaceItem{n: 10 + i, bitstream: d.nextBits, lastmod: base.Add(time.Duration(i) * time.Minute)})
	}
	d.init()
	return d, nil
}

func (d *DSpace) url(p string) string { return d.URL() + dspaceBase + p }

func (d *DSpace) metadataURL(it *dspaceItem, format string) string {
	return d.url(fmt.Sprintf("resource/123456789/%d/%s", it.n, format))
}

func (d *DSpace) init() {
	now := d.clock.now()
	d.publishFiles()
	d.descriptions()
	d.setDoc(dspaceBase+"resourcelist.xml", d.resourceList(now))
	if d.dumps {
		d.resourceDump(now)
	}
	d.setDoc(dspaceBase+"capabilitylist.xml", d.capabilityList(""))
	// generateBlankChangeList: from and until both now, no entries.
	d.lastCL = now
	d.setDoc(dspaceBase+dspaceCLName(now), d.changeList(now, now, nil))
}

// descriptions writes the Source Description and its index.
func (d *DSpace) descriptions() {
	d.setDoc(dspaceBase+"sourcedescriptionindex.xml", []byte(`<?xml version="1.0" encoding="UTF-8"?>
<sm:sitemapindex xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="description" />
  <sm:sitemap>
    <sm:loc>`+d.url("sourcedescription.xml")+`</sm:loc>
  </sm:sitemap>
</sm:sitemapindex>
`))
	d.setDoc(dspaceBase+"sourcedescription.xml", []byte(`<?xml version="1.0" encoding="UTF-8"?>
<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="description" />
  <sm:url>
    <sm:loc>`+d.url("capabilitylist.xml")+`</sm:loc>
    <rs:md capability="capabilitylist" />
  </sm:url>
</sm:urlset>
`))
}

func dspaceCLName(t time.Time) string {
	return "changelist_" + t.In(eastern).Format("2006-01-02-150405") + ".xml"
}

// publishFiles serves every item's bitstream and metadata.
func (d *DSpace) publishFiles() {
	for _, it := range d.items {
		for _, f := range []string{"qdc", "mets"} {
			p := strings.TrimPrefix(d.metadataURL(it, f), d.URL())
			d.setFile(p, d.file(it, func() []byte { return d.metadata(it, f) }))
		}
		d.setFile(dspaceBase+fmt.Sprintf("bitstreams/%d", it.bitstream), d.file(it, func() []byte { return d.bitstreamBody(it) }))
	}
}

func (d *DSpace) file(it *dspaceItem, body func() []byte) *File {
	if it.withdrawn {
		return nil
	}
	return &File{Body: body(), Lastmod: asWritten(it.lastmod)}
}

func (d *DSpace) metadata(it *dspaceItem, format string) []byte {
	return []byte(fmt.Sprintf("<%s><title>Item 123456789/%d, version %d</title></%s>\n", format, it.n, it.version, format))
}

func (d *DSpace) bitstreamBody(it *dspaceItem) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("bitstream %d of item %d\n", it.bitstream, it.n)), 1+it.n%7)
}

// capabilityList is DSpaceCapabilityList.serialise: describedby and up
// links, then the Resource List and, after an update, the latest Change
// List.
func (d *DSpace) capabilityList(changeList string) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="capabilitylist" />
  <rs:ln rel="describedby" href="` + d.URL() + `/dspace-resourcesync/about.txt" />
  <rs:ln rel="up" href="` + d.url("sourcedescription.xml") + `" />
  <sm:url>
    <sm:loc>` + d.url("resourcelist.xml") + `</sm:loc>
    <rs:md capability="resourcelist" />
  </sm:url>
`)
	if d.dumps {
		b.WriteString("  <sm:url>\n    <sm:loc>" + d.url("resourcedump.xml") + "</sm:loc>\n    <rs:md capability=\"resourcedump\" />\n  </sm:url>\n")
	}
	if changeList != "" {
		b.WriteString("  <sm:url>\n    <sm:loc>" + d.url(changeList) + "</sm:loc>\n    <rs:md capability=\"changelist\" />\n  </sm:url>\n")
	}
	if d.changeDump != "" {
		// setChangeDump names the package itself, capability "changedump".
		b.WriteString("  <sm:url>\n    <sm:loc>" + d.url(d.changeDump) + "</sm:loc>\n    <rs:md capability=\"changedump\" />\n  </sm:url>\n")
	}
	b.WriteString("</sm:urlset>\n")
	return b.Bytes()
}

func (d *DSpace) resourceList(now time.Time) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="resourcelist" from="` + dspaceDate(now) + `" />
  <rs:ln rel="up" href="` + d.url("capabilitylist.xml") + `" />
`)
	for _, it := range d.byLastmod(d.items) {
		if !it.withdrawn {
			d.writeItem(&b, it, "", "never")
		}
	}
	b.WriteString("</sm:urlset>\n")
	return b.Bytes()
}

func (d *DSpace) byLastmod(items []*dspaceItem) []*dspaceItem {
	out := append([]*dspaceItem(nil), items...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].lastmod.Before(out[j].lastmod) })
	return out
}

// writeItem is DSpaceResourceDocument.addResources: the bitstream, then
// the metadata in each format, each with its links.
func (d *DSpace) writeItem(b *bytes.Buffer, it *dspaceItem, change, changefreq string) {
	d.writeItemIn(b, it, change, changefreq, false)
}

// writeItemIn writes an item's entries; in a dump manifest (inDump) each
// has its member's path, as DSpaceResourceDumpZip's getPath makes it.
func (d *DSpace) writeItemIn(b *bytes.Buffer, it *dspaceItem, change, changefreq string, inDump bool) {
	bits := d.url(fmt.Sprintf("bitstreams/%d", it.bitstream))
	collection := d.URL() + "/handle/123456789/2"
	body := d.bitstreamBody(it)
	fmt.Fprintf(b, "  <sm:url>\n    <sm:loc>%s</sm:loc>\n    <sm:lastmod>%s</sm:lastmod>\n", bits, dspaceDate(it.lastmod))
	if changefreq != "" {
		fmt.Fprintf(b, "    <sm:changefreq>%s</sm:changefreq>\n", changefreq)
	}
	fmt.Fprintf(b, "    <rs:md %shash=\"md5:%s\" length=\"%d\" %stype=\"text/plain\" />\n", changeAttr(change), md5hex(body), len(body), pathAttr(inDump, bitstreamPath(it)))
	fmt.Fprintf(b, "    <rs:ln href=\"%s\" rel=\"describedby\" />\n", d.metadataURL(it, "qdc"))
	fmt.Fprintf(b, "    <rs:ln href=\"%s\" rel=\"describedby\" />\n", d.metadataURL(it, "mets"))
	fmt.Fprintf(b, "    <rs:ln href=\"%s\" rel=\"collection\" />\n  </sm:url>\n", collection)
	for _, f := range [][2]string{{"qdc", "http://purl.org/dc/terms/"}, {"mets", "www.loc.gov/METS/"}} {
		other := "mets"
		if f[0] == "mets" {
			other = "qdc"
		}
		fmt.Fprintf(b, "  <sm:url>\n    <sm:loc>%s</sm:loc>\n    <sm:lastmod>%s</sm:lastmod>\n", d.metadataURL(it, f[0]), dspaceDate(it.lastmod))
		if changefreq != "" {
			fmt.Fprintf(b, "    <sm:changefreq>%s</sm:changefreq>\n", changefreq)
		}
		fmt.Fprintf(b, "    <rs:md %s%stype=\"application/xml\" />\n", changeAttr(change), pathAttr(inDump, metadataPath(it, f[0])))
		fmt.Fprintf(b, "    <rs:ln href=\"%s\" rel=\"profile\" />\n", f[1])
		fmt.Fprintf(b, "    <rs:ln href=\"%s\" rel=\"describes\" />\n", bits)
		fmt.Fprintf(b, "    <rs:ln href=\"%s\" rel=\"collection\" />\n", collection)
		fmt.Fprintf(b, "    <rs:ln href=\"%s\" rel=\"alternate\" type=\"application/xml\" />\n  </sm:url>\n", d.metadataURL(it, other))
	}
}

func changeAttr(change string) string {
	if change == "" {
		return ""
	}
	return `change="` + change + `" `
}

// changeList is DSpaceChangeList.serialiseForDump: a removed bitstream has
// no lastmod (so ResourceSyncDocument's TreeMap puts it first, under
// Date(0)), the others are the item's resources with its lastmod.
func (d *DSpace) changeList(from, until time.Time, events []dspaceEvent) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="changelist" from="` + dspaceDate(from) + `" until="` + dspaceDate(until) + `" />
  <rs:ln rel="up" href="` + d.url("capabilitylist.xml") + `" />
`)
	for _, e := range events {
		if e.item == nil {
			fmt.Fprintf(&b, "  <sm:url>\n    <sm:loc>%s</sm:loc>\n    <rs:md change=\"deleted\" />\n  </sm:url>\n", d.url(fmt.Sprintf("bitstreams/%d", e.bitstream)))
		}
	}
	var dated []dspaceEvent
	for _, e := range events {
		if e.item != nil {
			dated = append(dated, e)
		}
	}
	sort.SliceStable(dated, func(i, j int) bool { return dated[i].item.lastmod.Before(dated[j].item.lastmod) })
	for _, e := range dated {
		change := e.change
		if e.item.withdrawn {
			change = "deleted" // DSpaceChangeList.addBitstream and addMetadata
		}
		d.writeItem(&b, e.item, change, "")
	}
	b.WriteString("</sm:urlset>\n")
	return b.Bytes()
}

// Create deposits a new item (recorded for the next update).
func (d *DSpace) Create() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nextBits++
	it := &dspaceItem{n: 10 + len(d.items), bitstream: d.nextBits, lastmod: d.clock.now()}
	d.items = append(d.items, it)
	d.events = append(d.events, dspaceEvent{item: it, change: "created"})
	d.history = append(d.history, d.events[len(d.events)-1])
	d.publishFiles()
}

// Replace replaces the k-th item's bitstream with a new one (DSpace gives
// it a new id) and edits its metadata: the old bitstream's removal is an
// undated deletion.
func (d *DSpace) Replace(k int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	it := d.items[k]
	old := it.bitstream
	d.setFile(dspaceBase+fmt.Sprintf("bitstreams/%d", old), nil)
	d.nextBits++
	it.bitstream, it.version, it.lastmod = d.nextBits, it.version+1, d.clock.now()
	d.events = append(d.events, dspaceEvent{bitstream: old, change: "deleted"}, dspaceEvent{item: it, change: "updated"})
	d.history = append(d.history, d.events[len(d.events)-2:]...)
	d.publishFiles()
}

// Withdraw withdraws the k-th item: its resources are listed deleted,
// dated by the item's lastmod.
func (d *DSpace) Withdraw(k int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	it := d.items[k]
	it.withdrawn, it.lastmod = true, d.clock.now()
	for _, f := range []string{"qdc", "mets"} {
		d.setFile(strings.TrimPrefix(d.metadataURL(it, f), d.URL()), nil)
	}
	d.setFile(dspaceBase+fmt.Sprintf("bitstreams/%d", it.bitstream), nil)
	d.events = append(d.events, dspaceEvent{item: it, change: "deleted"})
	d.history = append(d.history, d.events[len(d.events)-1])
}

// Update is `ResourceSyncGenerator -u`: a new Change List of the events
// since the last run, the Capability List naming it, and the change list
// archive (changelistindex.xml) naming it alone.
func (d *DSpace) Update() {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.clock.now()
	name := dspaceCLName(now)
	d.setDoc(dspaceBase+name, d.changeList(d.lastCL, now, d.events))
	if d.dumps {
		d.changeDumpRun(now, d.events)
	}
	d.lastCL, d.events = now, nil
	d.setDoc(dspaceBase+"capabilitylist.xml", d.capabilityList(name))
	d.setDoc(dspaceBase+"changelistindex.xml", d.archive(name, now))
}

// archive is DSpaceChangeListArchive.serialise: the Change List of this
// run alone.
func (d *DSpace) archive(name string, now time.Time) []byte {
	return []byte(`<?xml version="1.0" encoding="UTF-8"?>
<sm:sitemapindex xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="changelistindex" from="` + dspaceDate(now) + `" until="` + dspaceDate(now) + `" />
  <rs:ln rel="up" href="` + d.url("capabilitylist.xml") + `" />
  <sm:sitemap>
    <sm:loc>` + d.url(name) + `</sm:loc>
    <sm:lastmod>` + dspaceDate(now) + `</sm:lastmod>
  </sm:sitemap>
</sm:sitemapindex>
`)
}

// Rebase is `ResourceSyncGenerator -r`: it empties the directory (every
// Change List so far answers 404 from then on), writes the Resource List
// anew, and a Change List whose from is the newest Change List's date in
// the emptied directory, so new Date(0) (1969-12-31T19:00:00Z, local time
// with a Z), holding every event the audit service has recorded.
func (d *DSpace) Rebase() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dropDocs(dspaceBase)
	now := d.clock.now()
	epoch := time.Unix(0, 0)
	d.setDoc(dspaceBase+"resourcelist.xml", d.resourceList(now))
	if d.dumps {
		d.resourceDump(now)
	}
	d.changeDump = "" // rebase sets changeDump false: the Capability List names none
	d.descriptions()
	name := dspaceCLName(now)
	d.setDoc(dspaceBase+name, d.changeList(epoch, now, d.history))
	d.lastCL, d.events = now, nil
	d.setDoc(dspaceBase+"capabilitylist.xml", d.capabilityList(name))
	d.setDoc(dspaceBase+"changelistindex.xml", d.archive(name, now))
}

// State is what a mount must show.
func (d *DSpace) State() map[string]File { return d.state() }
