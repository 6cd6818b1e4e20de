// Package publishers holds test Sources that publish ResourceSync documents
// the way real publishers' code writes them: DSpace's ResourceSync module,
// Hyrax, the POD aggregator, WEKO3 and the older resync library. Every
// document is literal XML, written from that publisher's templates (each
// file names the code it follows), never by rsfs's own writer, so a test
// that mounts one proves rsfs reads what those publishers really write.
//
// Each Source is served by a real HTTP server on 127.0.0.1, holds a few
// dozen resources (Hyrax: 50,000), and changes them the way its publisher's
// code does (a new Change List, a rewritten one, a new dump). State returns
// what a mount must show: the path of each file, its bytes and its mtime.
package publishers

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// File is a resource as a mount must show it.
type File struct {
	Body    []byte
	Lastmod time.Time
}

// server serves the documents and resources a publisher has published.
// Documents answer 304 to a matching If-None-Match; resources carry their
// ETag and Last-Modified.
type server struct {
	ln  net.Listener
	srv *http.Server

	mu    sync.Mutex
	docs  map[string][]byte // URL path → document
	files map[string]File   // URL path → resource
	blobs map[string]File   // URL path → dump package (ranges served, not in the tree)

	docRequests atomic.Int64
	// fileRequests and fileHeads count the requests for resources (and
	// dump packages), and of them the HEADs.
	fileRequests, fileHeads atomic.Int64
	delay                   atomic.Int64 // a time.Duration each answer waits
}

func newServer() (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s := &server{ln: ln, docs: map[string][]byte{}, files: map[string]File{}, blobs: map[string]File{}}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// URL is the server's root, without a trailing slash.
func (s *server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server.
func (s *server) Close() { s.srv.Close() }

// DocRequests counts the GETs of documents answered so far.
func (s *server) DocRequests() int64 { return s.docRequests.Load() }

// FileRequests counts the requests for resources and dump packages so far,
// and of them the HEADs.
func (s *server) FileRequests() (all, heads int64) { return s.fileRequests.Load(), s.fileHeads.Load() }

// SetDelay makes every answer wait d first (a distant Source; 0: none).
func (s *server) SetDelay(d time.Duration) { s.delay.Store(int64(d)) }

// setDoc publishes (or replaces) the document at path, a copy of body.
func (s *server) setDoc(path string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.docs[path] = bytes.Clone(body)
}

// setFile publishes a resource's bytes at path; a nil File removes it.
func (s *server) setFile(path string, f *File) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f == nil {
		delete(s.files, path)
		return
	}
	s.files[path] = *f
}

// dropDocs removes the documents whose path has the given prefix.
func (s *server) dropDocs(prefix string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range s.docs {
		if strings.HasPrefix(p, prefix) {
			delete(s.docs, p)
		}
	}
}

// setBlob publishes a dump package at path.
func (s *server) setBlob(path string, f File) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blobs[path] = f
}

// state is every published resource, by URL path.
func (s *server) state() map[string]File {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]File, len(s.files))
	for p, f := range s.files {
		out[p] = f
	}
	return out
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if r.URL.RawQuery != "" {
		path += "?" + r.URL.RawQuery
	}
	s.mu.Lock()
	doc, isDoc := s.docs[path]
	f, isFile := s.files[path]
	if blob, ok := s.blobs[path]; ok {
		f, isFile = blob, true
	}
	s.mu.Unlock()
	if d := time.Duration(s.delay.Load()); d > 0 {
		time.Sleep(d)
	}
	switch {
	case isDoc:
		s.serveDoc(w, r, doc)
	case isFile:
		s.fileRequests.Add(1)
		if r.Method == http.MethodHead {
			s.fileHeads.Add(1)
		}
		w.Header().Set("ETag", `"`+md5hex(f.Body)+`"`)
		http.ServeContent(w, r, "", f.Lastmod, bytes.NewReader(f.Body))
	default:
		http.NotFound(w, r)
	}
}

func (s *server) serveDoc(w http.ResponseWriter, r *http.Request, doc []byte) {
	if r.Method == http.MethodGet {
		s.docRequests.Add(1)
	}
	etag := `"` + md5hex(doc) + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Content-Type", "application/xml")
	for _, t := range strings.Split(r.Header.Get("If-None-Match"), ",") {
		if strings.TrimSpace(t) == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(doc)))
	if r.Method != http.MethodHead {
		w.Write(doc)
	}
}

func md5hex(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

// clock hands out publication times: each call is later than the last by
// at least a second, since the publishers write second-precision times
// (and DSpace names its Change Lists by the second).
type clock struct {
	mu   sync.Mutex
	last time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := time.Now().Truncate(time.Second)
	if !t.After(c.last) {
		t = c.last.Add(time.Second)
	}
	c.last = t
	return t
}
