// Package hostile is a ResourceSync Source for fault tests, on 127.0.0.1
// only. Its documents are hand-written XML strings (not the project's
// writer, so a bug there cannot hide one in the reader), and each resource
// can be given a fault: resets, 5xx bursts, truncated or overlong bodies,
// bytes that disagree with the published hash or length, redirect loops,
// drips. The Source can be stopped and restarted on the same port.
package hostile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Lastmod is every resource's published lastmod.
var Lastmod = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Resource is one published file.
type Resource struct {
	Name string // under /files/
	// Body is what the Source publishes: its length and sha-256 are in the
	// Resource List.
	Body []byte
	// Served, when set, is what the server sends instead of Body (bytes
	// that disagree with what was published).
	Served []byte
	// NoETag serves without ETag and Last-Modified (no validator at all).
	NoETag bool
	// Mirror lists a copy at /mirror/NAME (rs:ln rel="duplicate"), which
	// always serves Body.
	Mirror bool
	// Loc, when set, is written into the Resource List as this entry's
	// <loc>, verbatim (it must already be escaped for XML), instead of the
	// Source's own /files/NAME: a URI the Source should not be trusted with.
	// "{base}" in it stands for the Source's URL (ending in /).
	Loc string
}

// Fault decides how the Source answers one request for a resource's bytes.
// It returns true when it has answered; false lets the Source answer
// properly. n counts the requests for this resource, from 1.
type Fault func(w http.ResponseWriter, r *http.Request, body []byte, n int64) bool

// Source is a running hostile Source.
type Source struct {
	addr string
	mu   sync.Mutex
	ln   net.Listener
	srv  *http.Server
	res  map[string]*entry
	list []string
}

type entry struct {
	Resource
	fault    Fault
	requests atomic.Int64
}

// Start serves rs on a free 127.0.0.1 port.
func Start(rs []Resource) (*Source, error) {
	s := &Source{res: map[string]*entry{}}
	for _, r := range rs {
		s.res[r.Name] = &entry{Resource: r}
		s.list = append(s.list, r.Name)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("hostile: listen: %w", err)
	}
	s.addr = ln.Addr().String()
	s.serve(ln)
	return s, nil
}

// URL is the Source's base URL (ending in /).
func (s *Source) URL() string { return "http://" + s.addr + "/" }

// SetFault gives a resource a fault (nil: none).
func (s *Source) SetFault(name string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.res[name].fault = f
}

// Requests returns how many requests a resource's URI got.
func (s *Source) Requests(name string) int64 { return s.res[name].requests.Load() }

// Stop closes the listener and every connection, as a killed server would.
func (s *Source) Stop() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// Restart serves again on the same port.
func (s *Source) Restart() error {
	var ln net.Listener
	var err error
	for range 50 { // the port may linger briefly
		if ln, err = net.Listen("tcp", s.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("hostile: restart on %s: %w", s.addr, err)
	}
	s.serve(ln)
	return nil
}

// Close stops the Source for good.
func (s *Source) Close() { s.Stop() }

func (s *Source) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(s.handle), ReadHeaderTimeout: 10 * time.Second}
	s.mu.Lock()
	s.ln, s.srv = ln, srv
	s.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

func (s *Source) handle(w http.ResponseWriter, r *http.Request) {
	switch p := r.URL.Path; {
	case p == "/.well-known/resourcesync":
		s.xml(w, s.description())
	case p == "/capabilitylist.xml":
		s.xml(w, s.capabilityList())
	case p == "/resourcelist.xml":
		s.xml(w, s.resourceList())
	case strings.HasPrefix(p, "/files/"):
		s.file(w, r, strings.TrimPrefix(p, "/files/"))
	case strings.HasPrefix(p, "/mirror/"):
		if e := s.entry(strings.TrimPrefix(p, "/mirror/")); e != nil && e.Mirror {
			serveBytes(w, r, e.Body, !e.NoETag)
			return
		}
		http.NotFound(w, r)
	case strings.HasPrefix(p, "/loop/"):
		http.Redirect(w, r, "/loop/"+fmt.Sprint(len(p)%2), http.StatusFound)
	default:
		http.NotFound(w, r)
	}
}

func (s *Source) entry(name string) *entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.res[name]
}

func (s *Source) file(w http.ResponseWriter, r *http.Request, name string) {
	e := s.entry(name)
	if e == nil {
		http.NotFound(w, r)
		return
	}
	n := e.requests.Add(1)
	s.mu.Lock()
	fault := e.fault
	s.mu.Unlock()
	body := e.Body
	if e.Served != nil {
		body = e.Served
	}
	if fault != nil && fault(w, r, body, n) {
		return
	}
	serveBytes(w, r, body, !e.NoETag)
}

// serveBytes answers GET, HEAD and Range as real servers do; with
// validators, a strong ETag (the body's sha-256) and Last-Modified.
func serveBytes(w http.ResponseWriter, r *http.Request, body []byte, validators bool) {
	mod := time.Time{}
	if validators {
		sum := sha256.Sum256(body)
		w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:8])+`"`)
		mod = Lastmod
	}
	http.ServeContent(w, r, "", mod, bytes.NewReader(body))
}

func (s *Source) xml(w http.ResponseWriter, doc string) {
	w.Header().Set("Content-Type", "application/xml")
	_, _ = w.Write([]byte(doc))
}

const head = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
`

func (s *Source) description() string {
	return head + `  <rs:md capability="description"/>
  <url><loc>` + s.URL() + `capabilitylist.xml</loc><rs:md capability="capabilitylist"/></url>
</urlset>
`
}

func (s *Source) capabilityList() string {
	return head + `  <rs:ln rel="up" href="` + s.URL() + `.well-known/resourcesync"/>
  <rs:md capability="capabilitylist"/>
  <url><loc>` + s.URL() + `resourcelist.xml</loc><rs:md capability="resourcelist"/></url>
</urlset>
`
}

func (s *Source) resourceList() string {
	var b strings.Builder
	b.WriteString(head)
	fmt.Fprintf(&b, "  <rs:ln rel=\"up\" href=\"%scapabilitylist.xml\"/>\n", s.URL())
	fmt.Fprintf(&b, "  <rs:md capability=\"resourcelist\" at=\"%s\" completed=\"%s\"/>\n",
		Lastmod.Format(time.RFC3339), Lastmod.Format(time.RFC3339))
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range s.list {
		e := s.res[name]
		sum := sha256.Sum256(e.Body)
		loc := s.URL() + "files/" + name
		if e.Loc != "" {
			loc = strings.ReplaceAll(e.Loc, "{base}", s.URL())
		}
		fmt.Fprintf(&b, "  <url>\n    <loc>%s</loc>\n    <lastmod>%s</lastmod>\n", loc, Lastmod.Format(time.RFC3339))
		fmt.Fprintf(&b, "    <rs:md hash=\"sha-256:%s\" length=\"%d\" type=\"application/octet-stream\"/>\n", hex.EncodeToString(sum[:]), len(e.Body))
		if e.Mirror {
			fmt.Fprintf(&b, "    <rs:ln rel=\"duplicate\" pri=\"1\" href=\"%smirror/%s\"/>\n", s.URL(), name)
		}
		b.WriteString("  </url>\n")
	}
	b.WriteString("</urlset>\n")
	return b.String()
}
