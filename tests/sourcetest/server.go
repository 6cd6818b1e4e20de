package sourcetest

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// cacheableEntries is the largest document (in entries) rendered into
// memory and cached; larger ones are streamed.
const cacheableEntries = 5000

// servePrimary answers requests at the primary server.
func (s *Source) servePrimary(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	key := requestKey(r.RequestURI)
	path := keyPath(key)
	if d, ok := s.routeDoc(path); ok && path == key && !s.hiddenByDumpOnly(d) {
		s.serveDoc(w, r, d)
		return
	}
	if path == key && s.serveDump(w, r, path) {
		return
	}
	if s.cfg.DumpOnly && key != "/robots.txt" && key != "/" && key != "/index.html" {
		http.NotFound(w, r)
		return
	}
	switch key {
	case "/robots.txt":
		s.serveRobots(w, r)
		return
	case "/", "/index.html":
		s.serveHTML(w, r)
		return
	}
	s.serveResource(w, r, key, true)
}

// serveMirror answers requests at the mirror: resources under /mirror/.
func (s *Source) serveMirror(w http.ResponseWriter, r *http.Request) {
	key, ok := strings.CutPrefix(requestKey(r.RequestURI), "/mirror")
	if !ok || !strings.HasPrefix(key, "/") {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	s.serveResource(w, r, key, false)
}

// serveDoc answers a ResourceSync document, from the cache when small (or
// when Config.DocCacheBytes is set), streamed when large.
func (s *Source) serveDoc(w http.ResponseWriter, r *http.Request, d docRef) {
	if r.Method == http.MethodHead && s.cfg.NoHEAD {
		http.Error(w, "HEAD not allowed", http.StatusMethodNotAllowed)
		return
	}
	if r.Method == http.MethodGet {
		s.countDoc(d)
	}
	m := s.metaOf(d)
	h := w.Header()
	h.Set("ETag", m.etag)
	h.Set("Last-Modified", m.modTime.UTC().Format(http.TimeFormat))
	h.Set("Content-Type", "application/xml")
	if m.gzip {
		h.Set("Content-Type", "application/gzip")
	}
	if notModified(r, m.etag, m.modTime) {
		s.count.notModified.Add(1)
		h.Del("Content-Type")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if m.entries <= cacheableEntries || s.cfg.DocCacheBytes > 0 {
		s.serveCachedDoc(w, r, d, m)
		return
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return
	}
	if err := s.writeDoc(w, d, m); err != nil {
		slog.Debug("sourcetest: streaming a document", "path", s.docPath(d), "err", err)
	}
}

// serveCachedDoc renders a small document into memory (once per version)
// and serves it with Range and conditional support.
func (s *Source) serveCachedDoc(w http.ResponseWriter, r *http.Request, d docRef, m docMeta) {
	ck := s.docPath(d) + m.etag
	b, ok := s.docs.get(ck)
	if !ok {
		var buf bytes.Buffer
		if err := s.writeDoc(&buf, d, m); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		b = buf.Bytes()
		s.docs.put(ck, b)
	}
	http.ServeContent(w, r, "", m.modTime, bytes.NewReader(b))
}

// notModified evaluates If-None-Match, else If-Modified-Since.
func notModified(r *http.Request, etag string, mod time.Time) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		for _, t := range strings.Split(inm, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
			if t == "*" || t == etag {
				return true
			}
		}
		return false
	}
	ims, err := http.ParseTime(r.Header.Get("If-Modified-Since"))
	return err == nil && !mod.Truncate(time.Second).After(ims)
}

// served is what one content response needs, copied out under the lock.
type served struct {
	body    io.ReadSeeker
	etag    string
	lastmod time.Time
	typ     string
	set     int
	fail    int
}

// resolve finds the resource of a key; ok is false when there is none.
func (s *Source) resolve(key string, primary bool) (served, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.lookupLocked(key)
	if !ok || r.deleted {
		return served{}, false
	}
	v := served{etag: r.etag, lastmod: r.lastmod, typ: r.typ, set: r.set}
	switch {
	case primary && r.corrupt != nil:
		v.body = bytes.NewReader(r.corrupt)
	default:
		v.body = r.reader(s.cfg.Seed)
	}
	if primary {
		v.fail = r.fail
	}
	return v, true
}

// serveResource answers a resource's content at the primary or the mirror.
func (s *Source) serveResource(w http.ResponseWriter, r *http.Request, key string, primary bool) {
	s.countContent(r, primary)
	v, ok := s.resolve(key, primary)
	if !ok {
		http.NotFound(w, r)
		return
	}
	if v.fail != 0 {
		http.Error(w, http.StatusText(v.fail), v.fail)
		return
	}
	if r.Method == http.MethodHead && s.cfg.NoHEAD {
		http.Error(w, "HEAD not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !s.wait(r) {
		return
	}
	h := w.Header()
	h.Set("ETag", v.etag)
	h.Set("Content-Type", v.typ)
	h.Set("Link", `<`+s.CapabilityListURL(v.set)+`>; rel="resourcesync"`)
	if s.cfg.IgnoreRange {
		r.Header.Del("Range")
		r.Header.Del("If-Range")
	}
	rec := &statusRecorder{ResponseWriter: w}
	http.ServeContent(rec, r, "", v.lastmod, v.body)
	if rec.status == http.StatusNotModified {
		s.count.notModified.Add(1)
	}
}

func (s *Source) countDoc(d docRef) {
	switch d.kind {
	case docResourceList, docIndex, docPage:
		s.count.listDocs.Add(1)
	default:
		s.count.otherDocs.Add(1)
	}
}

func (s *Source) countContent(r *http.Request, primary bool) {
	switch {
	case r.Method == http.MethodHead:
		s.count.heads.Add(1)
	case !primary:
		s.count.mirror.Add(1)
	case r.Header.Get("Range") != "":
		s.count.rangeGets.Add(1)
	default:
		s.count.wholeGets.Add(1)
	}
}

// wait applies the configured delay; false when the client went away.
func (s *Source) wait(r *http.Request) bool {
	d := time.Duration(s.delay.Load())
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// statusRecorder remembers the status code written.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}
