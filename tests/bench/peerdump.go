package main

import (
	"archive/zip"
	"bufio"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/template"
	"time"
)

// defaultPerPackage is how many small files each Resource Dump package
// holds, unless -latency-per-package says otherwise.
const defaultPerPackage = 1000

// dumpPackageFile is one generated package, served from the tree.
type dumpPackageFile struct {
	Path string // relative to the tree's root
	Size int64
	MD5  string
}

var dumpTemplates = template.Must(template.New("dump").Parse(`
{{define "capabilitylist"}}<?xml version="1.0" encoding="UTF-8"?>
<urlset ` + rsNS + `>
  <rs:ln rel="up" href="{{.Base}}.well-known/resourcesync"/>
  <rs:md capability="capabilitylist"/>
  <url><loc>{{.Base}}resourcelist.xml</loc><rs:md capability="resourcelist"/></url>
  <url><loc>{{.Base}}resourcedump.xml</loc><rs:md capability="resourcedump"/></url>
</urlset>
{{end}}
{{define "resourcedump"}}<?xml version="1.0" encoding="UTF-8"?>
<urlset ` + rsNS + `>
  <rs:ln rel="up" href="{{.Base}}capabilitylist.xml"/>
  <rs:md capability="resourcedump" at="{{.At}}" completed="{{.At}}"/>
{{range .Packages}}  <url><loc>{{$.Base}}{{.Path}}</loc><lastmod>{{$.At}}</lastmod><rs:md type="application/zip" length="{{.Size}}" hash="md5:{{.MD5}}"/></url>
{{end}}</urlset>
{{end}}
{{define "manifest"}}<?xml version="1.0" encoding="UTF-8"?>
<urlset ` + rsNS + `>
  <rs:md capability="resourcedump-manifest" at="{{.At}}" completed="{{.At}}"/>
{{range .Files}}  <url><loc>{{$.Base}}{{.Path}}</loc><lastmod>{{$.At}}</lastmod><rs:md hash="md5:{{.MD5}} sha-256:{{.SHA256}}" length="{{.Size}}" type="{{.Type}}" path="/{{.Path}}"/></url>
{{end}}</urlset>
{{end}}`))

// dumpData feeds the dump templates.
type dumpData struct {
	Base     string
	At       string
	Files    []treeFile
	Packages []dumpPackageFile
}

// writeDumpDocs writes into dir the documents of a Source that publishes
// the small files in a Resource List (md5) and in a Resource Dump whose
// ZIP packages (members stored, perPackage files each, in the order the
// files were created or shuffled) it writes under the tree's pkgDir: the
// dump is then each file's fallback copy, and what rsfs reads its batches
// from. Its files are served at base like the other documents (nginx's
// server for name).
func (t *peerTree) writeDumpDocs(name, dir, base, pkgDir string, perPackage int, shuffled bool) error {
	listOnly, had := t.docs["md5"]
	if err := t.writeDocs(dir, base, "md5"); err != nil {
		return err
	}
	delete(t.docs, "md5")
	if had {
		t.docs["md5"] = listOnly
	}
	t.docs[name] = dir
	at := time.Now().UTC().Format(time.RFC3339)
	d := dumpData{Base: base, At: at}
	small := t.files[:t.small]
	if shuffled { // a dump written in another order than the paths' (by date, say)
		small = slices.Clone(small)
		rand.New(rand.NewPCG(23, 5)).Shuffle(len(small), func(i, j int) { small[i], small[j] = small[j], small[i] })
	}
	for k := 0; k*perPackage < len(small); k++ {
		part := small[k*perPackage : min((k+1)*perPackage, len(small))]
		pkg, err := t.writePackage(fmt.Sprintf("%s/part%05d.zip", pkgDir, k), base, at, part)
		if err != nil {
			return err
		}
		d.Packages = append(d.Packages, pkg)
	}
	for _, doc := range []struct{ name, file string }{{"capabilitylist", "capabilitylist.xml"}, {"resourcedump", "resourcedump.xml"}} {
		f, err := os.Create(filepath.Join(dir, doc.file))
		if err != nil {
			return err
		}
		if err := dumpTemplates.ExecuteTemplate(f, doc.name, d); err != nil {
			f.Close()
			return fmt.Errorf("document %s: %w", doc.file, err)
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// writePackage writes one package: manifest.xml, then the files stored.
func (t *peerTree) writePackage(rel, base, at string, files []treeFile) (dumpPackageFile, error) {
	p := filepath.Join(t.www, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return dumpPackageFile{}, err
	}
	out, err := os.Create(p)
	if err != nil {
		return dumpPackageFile{}, err
	}
	defer out.Close()
	h := md5.New()
	bw := bufio.NewWriterSize(io.MultiWriter(out, h), 1<<20)
	zw := zip.NewWriter(bw)
	mod := time.Now()
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "manifest.xml", Method: zip.Deflate, Modified: mod})
	if err != nil {
		return dumpPackageFile{}, err
	}
	if err := dumpTemplates.ExecuteTemplate(w, "manifest", dumpData{Base: base, At: at, Files: files}); err != nil {
		return dumpPackageFile{}, fmt.Errorf("manifest of %s: %w", rel, err)
	}
	for _, f := range files {
		body, err := os.ReadFile(filepath.Join(t.www, filepath.FromSlash(f.Path)))
		if err != nil {
			return dumpPackageFile{}, err
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: strings.TrimPrefix(f.Path, "/"), Method: zip.Store, Modified: mod})
		if err != nil {
			return dumpPackageFile{}, err
		}
		if _, err := w.Write(body); err != nil {
			return dumpPackageFile{}, err
		}
	}
	if err := zw.Close(); err != nil {
		return dumpPackageFile{}, err
	}
	if err := bw.Flush(); err != nil {
		return dumpPackageFile{}, err
	}
	fi, err := out.Stat()
	if err != nil {
		return dumpPackageFile{}, err
	}
	return dumpPackageFile{Path: rel, Size: fi.Size(), MD5: hex.EncodeToString(h.Sum(nil))}, out.Close()
}
