package main

import (
	"bufio"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"time"
)

// The peer Source is a static tree on disk, served by nginx: small text
// files under data/, one large file under big/, and per hash algorithm a
// directory of ResourceSync documents written from plain templates (not
// rsfs's own writer, so a bug there cannot hide a bug in the reader).
const (
	perDir     = 200   // small files per directory
	perList    = 50000 // resources per Resource List (the Sitemap limit)
	needle     = "END-OF-FILE"
	bigRelPath = "big/big.bin"
)

// treeFile is one generated resource.
type treeFile struct {
	Path   string // relative to the tree's root, slash separated
	Size   int64
	MD5    string
	SHA256 string
	Type   string
}

// peerTree is the generated tree: www holds the resources, docs[alg] the
// documents that publish them with alg's hashes.
type peerTree struct {
	www   string
	docs  map[string]string
	files []treeFile
	small int // how many small files, all under data/
	dirs  int // how many directories under data/
}

func genTree(root string, l layout, small int, smallSize, bigSize int64) (*peerTree, error) {
	t := &peerTree{www: filepath.Join(root, "www"), docs: map[string]string{}, small: small}
	var paths []string
	for i := range small {
		f, err := writeSmall(t.www, l.path(i), i, smallSize)
		if err != nil {
			return nil, err
		}
		t.files = append(t.files, f)
		paths = append(paths, f.Path)
	}
	t.dirs = dirsUnder(paths)
	if bigSize > 0 {
		f, err := writeBig(t.www, bigSize)
		if err != nil {
			return nil, err
		}
		t.files = append(t.files, f)
	}
	return t, nil
}

// smallBody is size bytes of text lines; the needle is on the last line,
// so a grep that finds it has read the whole file.
func smallBody(i int, size int64) []byte {
	tail := fmt.Sprintf("%s %07d\n", needle, i)
	var b strings.Builder
	for k := 0; int64(b.Len()) < size; k++ {
		fmt.Fprintf(&b, "file %07d line %04d the quick brown fox jumps over the lazy dog\n", i, k)
	}
	body := []byte(b.String())[:max(size-int64(len(tail)), 0)]
	return append(body, tail...)
}

func writeSmall(www, rel string, i int, size int64) (treeFile, error) {
	body := smallBody(i, size)
	p := filepath.Join(www, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return treeFile{}, fmt.Errorf("small file %d: %w", i, err)
	}
	if err := os.WriteFile(p, body, 0o644); err != nil {
		return treeFile{}, fmt.Errorf("small file %d: %w", i, err)
	}
	m, s := md5.Sum(body), sha256.Sum256(body)
	return treeFile{Path: rel, Size: int64(len(body)), MD5: hex.EncodeToString(m[:]),
		SHA256: hex.EncodeToString(s[:]), Type: "text/plain"}, nil
}

// writeBig writes size pseudo-random bytes, hashing them on the way.
func writeBig(www string, size int64) (treeFile, error) {
	p := filepath.Join(www, bigRelPath)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return treeFile{}, fmt.Errorf("big file: %w", err)
	}
	out, err := os.Create(p)
	if err != nil {
		return treeFile{}, fmt.Errorf("big file: %w", err)
	}
	m, s := md5.New(), sha256.New()
	w := bufio.NewWriterSize(io.MultiWriter(out, m, s), 1<<20)
	rng := rand.NewChaCha8([32]byte{'r', 's', 'f', 's'})
	if _, err := io.CopyN(w, rng, size); err != nil {
		out.Close()
		return treeFile{}, fmt.Errorf("big file: %w", err)
	}
	if err := w.Flush(); err != nil {
		out.Close()
		return treeFile{}, fmt.Errorf("big file: %w", err)
	}
	if err := out.Close(); err != nil {
		return treeFile{}, fmt.Errorf("big file: %w", err)
	}
	return treeFile{Path: bigRelPath, Size: size, MD5: hex.EncodeToString(m.Sum(nil)),
		SHA256: hex.EncodeToString(s.Sum(nil)), Type: "application/octet-stream"}, nil
}

// findEntries is what `find DIR` prints over a mount of the tree: the root,
// data/, its directories and files, big/ and the large file.
func (t *peerTree) findEntries() int {
	n := 1 + 1 + t.dirs + t.small
	if len(t.files) > t.small {
		n += 2
	}
	return n
}

const rsNS = `xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"`

var docTemplates = template.Must(template.New("docs").Parse(`
{{define "description"}}<?xml version="1.0" encoding="UTF-8"?>
<urlset ` + rsNS + `>
  <rs:md capability="description"/>
  <url><loc>{{.Base}}capabilitylist.xml</loc><rs:md capability="capabilitylist"/></url>
</urlset>
{{end}}
{{define "capabilitylist"}}<?xml version="1.0" encoding="UTF-8"?>
<urlset ` + rsNS + `>
  <rs:ln rel="up" href="{{.Base}}.well-known/resourcesync"/>
  <rs:md capability="capabilitylist"/>
  <url><loc>{{.Base}}resourcelist.xml</loc><rs:md capability="resourcelist"/></url>
</urlset>
{{end}}
{{define "index"}}<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex ` + rsNS + `>
  <rs:ln rel="up" href="{{.Base}}capabilitylist.xml"/>
  <rs:md capability="resourcelist" at="{{.At}}" completed="{{.At}}"/>
{{range .Parts}}  <sitemap><loc>{{$.Base}}resourcelist-{{.}}.xml</loc></sitemap>
{{end}}</sitemapindex>
{{end}}
{{define "list"}}<?xml version="1.0" encoding="UTF-8"?>
<urlset ` + rsNS + `>
  <rs:ln rel="up" href="{{.Base}}capabilitylist.xml"/>
  <rs:md capability="resourcelist" at="{{.At}}" completed="{{.At}}"/>
{{range .Files}}  <url><loc>{{$.Base}}{{.Path}}</loc><lastmod>{{$.At}}</lastmod><rs:md hash="{{$.Alg}}:{{$.Hash .}}" length="{{.Size}}" type="{{.Type}}"/></url>
{{end}}</urlset>
{{end}}`))

// docData feeds the templates for one port and algorithm.
type docData struct {
	Base  string // http://127.0.0.1:PORT/
	At    string
	Alg   string // md5 or sha-256
	Files []treeFile
	Parts []int
}

func (d docData) Hash(f treeFile) string {
	if d.Alg == "md5" {
		return f.MD5
	}
	return f.SHA256
}

// writeDocs writes the documents publishing the tree at base with alg's
// hashes into dir: the Source Description at .well-known/resourcesync, a
// Capability List, and a Resource List (an index over parts past 50,000).
func (t *peerTree) writeDocs(dir, base, alg string) error {
	t.docs[alg] = dir
	return writeListDocs(dir, base, alg, t.files, perList)
}

// writeListDocs writes the documents publishing files at base with alg's
// hashes into dir, a Resource List of at most per entries each (an index
// over them when there are more).
func writeListDocs(dir, base, alg string, files []treeFile, per int) error {
	d := docData{Base: base, At: time.Now().UTC().Format(time.RFC3339), Alg: alg}
	if err := renderDoc(filepath.Join(dir, ".well-known", "resourcesync"), "description", d); err != nil {
		return err
	}
	if err := renderDoc(filepath.Join(dir, "capabilitylist.xml"), "capabilitylist", d); err != nil {
		return err
	}
	if len(files) <= per {
		d.Files = files
		return renderDoc(filepath.Join(dir, "resourcelist.xml"), "list", d)
	}
	for k := 0; k*per < len(files); k++ {
		d.Parts = append(d.Parts, k)
		part := d
		part.Files = files[k*per : min((k+1)*per, len(files))]
		if err := renderDoc(filepath.Join(dir, fmt.Sprintf("resourcelist-%d.xml", k)), "list", part); err != nil {
			return err
		}
	}
	return renderDoc(filepath.Join(dir, "resourcelist.xml"), "index", d)
}

func renderDoc(path, name string, d docData) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("document %s: %w", path, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("document %s: %w", path, err)
	}
	w := bufio.NewWriter(f)
	if err := docTemplates.ExecuteTemplate(w, name, d); err != nil {
		f.Close()
		return fmt.Errorf("document %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("document %s: %w", path, err)
	}
	return f.Close()
}

// file returns the generated resource at rel.
func (t *peerTree) file(rel string) (treeFile, bool) {
	for _, f := range t.files {
		if f.Path == rel {
			return f, true
		}
	}
	return treeFile{}, false
}
