package publishers

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"
)

// WEKO publishes as WEKO3 (JAIRO Cloud) does (RCOSDP/weko:
// modules/invenio-resourcesyncserver/invenio_resourcesyncserver/utils.py's
// render_well_know_resourcesync and render_capability_xml, api.py's
// ResourceListHandler: get_resource_list_xml, get_resource_dump_xml,
// get_resource_dump_manifest and get_record_content_file; views.py's
// routes), the XML written by the resync library's as_xml (one line,
// attributes in its md_att_keys order, Python 3.8 keeps insertion order):
// a Source Description naming its Capability List with
// capability="capability"; a Resource List and a Resource Dump with no at;
// one dump package per item (file_content.zip: its files under
// recid_N/, the item type's TSV and manifest.xml), each pointing at its
// own manifest with rel="contents"; manifest paths without a leading
// slash, sha-256 hashes and lastmod the time the manifest was made.
//
// WEKO builds a package at each request (shutil.make_archive of a fresh
// export); here each is built once per version of its item, as a cache in
// front of it would serve it, since a package that changes between the
// range requests of one read is rightly refused.
type WEKO struct {
	*server
	clock clock

	mu    sync.Mutex
	items []*wekoItem
}

type wekoItem struct {
	recid   int
	updated time.Time // microseconds
	files   map[string][]byte
	made    time.Time // when its package and manifest were made
	pkg     []byte
	// since is, per file, the made of the first package that held its
	// bytes: a mount keeps a file's mtime while its hash stays the same,
	// though each new manifest dates every file anew.
	since map[string]time.Time
}

const wekoIndex = "1616224532673"

// NewWEKO starts a WEKO3 repository with n public items, each with two
// files.
func NewWEKO(n int) (*WEKO, error) {
	s, err := newServer()
	if err != nil {
		return nil, err
	}
	w := &WEKO{server: s}
	base := time.Now().Add(-time.Hour)
	for i := 1; i <= n; i++ {
		it := &wekoItem{recid: i, updated: base.Add(time.Duration(i) * 987654 * time.Microsecond).Truncate(time.Microsecond)}
		it.files = map[string][]byte{
			"paper.pdf": bytes.Repeat([]byte(fmt.Sprintf("%%PDF-1.4 item %d\n", i)), 10+i),
			"data.csv":  []byte(fmt.Sprintf("recid,value\n%d,%d\n", i, i*i)),
		}
		w.items = append(w.items, it)
	}
	w.publish()
	return w, nil
}

// Deposit publishes a new item with one file.
func (w *WEKO) Deposit() {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(w.items) + 1
	w.items = append(w.items, &wekoItem{recid: n, updated: w.clock.now().Add(123456 * time.Microsecond),
		files: map[string][]byte{"thesis.pdf": []byte(fmt.Sprintf("%%PDF-1.7 thesis %d\n", n))}})
	w.publish()
}

// ReplaceFile replaces the k-th item's paper.pdf.
func (w *WEKO) ReplaceFile(k int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	it := w.items[k]
	it.files["paper.pdf"] = []byte(fmt.Sprintf("%%PDF-1.5 item %d, revised\n", it.recid))
	delete(it.since, "paper.pdf")
	it.updated, it.pkg = w.clock.now().Add(654321*time.Microsecond), nil
	w.publish()
}

func (w *WEKO) root() string { return w.URL() + "/" } // request.url_root

const resyncHead3 = `<?xml version='1.0' encoding='UTF-8'?>` + "\n" +
	`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">`

func (w *WEKO) publish() {
	root := w.root()
	w.setDoc("/.well-known/resourcesync", []byte(resyncHead3+`<rs:ln href="`+root+`" rel="describedby" /><rs:md capability="description" /><url><loc>`+root+`resync/capability.xml</loc><rs:md capability="capability" /></url></urlset>`))
	w.setDoc("/resync/source.xml", []byte(resyncHead3+`<rs:ln href="`+root+`" rel="describedby" /><rs:md capability="description" /><url><loc>`+root+`resync/capability.xml</loc><rs:md capability="capability" /></url></urlset>`))
	list := root + "resync/" + wekoIndex
	w.setDoc("/resync/capability.xml", []byte(resyncHead3+`<rs:ln rel="up" href="`+root+`resync/source.xml" /><rs:md capability="capabilitylist" /><url><loc>`+list+`/resourcelist.xml</loc><rs:md capability="resourcelist" /></url><url><loc>`+list+`/resourcedump.xml</loc><rs:md capability="resourcedump" /></url></urlset>`))
	var rl, rd bytes.Buffer
	rl.WriteString(resyncHead3 + `<rs:ln rel="up" href="` + root + `resync/capability.xml" /><rs:md capability="resourcelist" />`)
	rd.WriteString(resyncHead3 + `<rs:ln rel="up" href="` + root + `resync/capability.xml" /><rs:md capability="resourcedump" />`)
	for _, it := range w.items {
		fmt.Fprintf(&rl, "<url><loc>%s/records/%d</loc><lastmod>%s</lastmod></url>", list, it.recid, pyDate(it.updated))
		fmt.Fprintf(&rd, `<url><loc>%s/%d/file_content.zip</loc><lastmod>%s</lastmod><rs:ln rel="contents" href="%s/%d/resourcedump_manifest.xml" type="application/xml" /></url>`,
			list, it.recid, pyDate(it.updated), list, it.recid)
		w.publishItem(it)
	}
	rl.WriteString("</urlset>")
	rd.WriteString("</urlset>")
	w.setDoc("/resync/"+wekoIndex+"/resourcelist.xml", rl.Bytes())
	w.setDoc("/resync/"+wekoIndex+"/resourcedump.xml", rd.Bytes())
}

// publishItem serves an item's record (its JPCOAR metadata), its files,
// its manifest and its package.
func (w *WEKO) publishItem(it *wekoItem) {
	if it.pkg == nil {
		it.made = w.clock.now().Add(24680 * time.Microsecond)
		it.pkg = w.pack(it)
		if it.since == nil {
			it.since = map[string]time.Time{}
		}
		for key := range it.files {
			if _, ok := it.since[key]; !ok {
				it.since[key] = it.made
			}
		}
	}
	w.setFile(fmt.Sprintf("/resync/%s/records/%d", wekoIndex, it.recid), &File{Body: w.record(it), Lastmod: it.updated.Truncate(time.Second)})
	for key, body := range it.files {
		w.setFile(fmt.Sprintf("/record/%d/files/%s", it.recid, key), &File{Body: body, Lastmod: it.since[key].Truncate(time.Second)})
	}
	w.setDoc(fmt.Sprintf("/resync/%s/%d/resourcedump_manifest.xml", wekoIndex, it.recid), w.manifest(it))
	w.setBlob(fmt.Sprintf("/resync/%s/%d/file_content.zip", wekoIndex, it.recid), File{Body: it.pkg, Lastmod: it.made.Truncate(time.Second)})
}

func (w *WEKO) record(it *wekoItem) []byte {
	return []byte(fmt.Sprintf(`<jpcoar:jpcoar xmlns:jpcoar="https://github.com/JPCOAR/schema/blob/master/1.0/"><dc:title xmlns:dc="http://purl.org/dc/elements/1.1/">Item %d (%d files)</dc:title></jpcoar:jpcoar>`, it.recid, len(it.files)))
}

func sortedKeys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// manifest is get_resource_dump_manifest.
func (w *WEKO) manifest(it *wekoItem) []byte {
	var b bytes.Buffer
	b.WriteString(resyncHead3 + `<rs:ln rel="up" href="` + w.root() + `resync/` + wekoIndex + `/resourcedump.xml" /><rs:md capability="resourcedump-manifest" />`)
	for _, key := range sortedKeys(it.files) {
		body := it.files[key]
		sum := sha256.Sum256(body)
		fmt.Fprintf(&b, `<url><loc>%srecord/%d/files/%s</loc><lastmod>%s</lastmod><rs:md hash="sha-256:%s" length="%d" path="recid_%d/%s" /></url>`,
			w.root(), it.recid, key, pyDate(it.made), hex.EncodeToString(sum[:]), len(body), it.recid, key)
	}
	b.WriteString("</urlset>")
	return b.Bytes()
}

// pack is get_record_content_file: shutil.make_archive of the export
// directory (deflated; directories before files, as os.walk gives them).
func (w *WEKO) pack(it *wekoItem) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name string, body []byte) {
		f, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: it.made})
		if err == nil && body != nil {
			_, err = f.Write(body)
		}
		if err != nil {
			panic(err) // writing to memory
		}
	}
	add(fmt.Sprintf("recid_%d/", it.recid), nil)
	add("WEKO Default Item Type(15).tsv", []byte(fmt.Sprintf("#ItemType\tWEKO Default Item Type(15)\n.id\t%d\n", it.recid)))
	add("manifest.xml", w.manifest(it))
	for _, key := range sortedKeys(it.files) {
		add(fmt.Sprintf("recid_%d/%s", it.recid, key), it.files[key])
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// State is what a mount must show.
func (w *WEKO) State() map[string]File { return w.state() }
