package specsource

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"time"
)

func (s *Source) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if s.countAndFail(w, r) {
		return
	}
	if body, ok := s.doc(r.URL.Path); ok {
		s.serveDoc(w, r, body)
		return
	}
	s.mu.Lock()
	pkg, isPkg := s.packageAt(r.URL.Path)
	f, ok := s.files[r.URL.Path]
	s.mu.Unlock()
	if isPkg {
		w.Header().Set("ETag", `"`+md5hex(pkg)+`"`)
		w.Header().Set("Content-Type", "application/zip")
		http.ServeContent(w, r, "", s.start, bytes.NewReader(pkg))
		return
	}
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("ETag", `"`+md5hex(f.Body)+`"`)
	w.Header().Set("Content-Type", "text/plain")
	http.ServeContent(w, r, "", f.Lastmod, bytes.NewReader(f.Body))
}

// serveDoc answers a document with an ETag, 304 when it is unchanged, and
// counts it.
func (s *Source) serveDoc(w http.ResponseWriter, r *http.Request, body []byte) {
	etag := `"` + md5hex(body) + `"`
	withETag, withLastMod := s.validators(r.URL.Path)
	if withETag {
		w.Header().Set("ETag", etag)
	}
	var lastMod time.Time
	if withLastMod {
		lastMod = s.lastModified(r.URL.Path, etag)
		w.Header().Set("Last-Modified", lastMod.Format(http.TimeFormat))
	}
	w.Header().Set("Content-Type", "application/xml")
	if r.Method == http.MethodGet {
		s.docs.Add(1)
	}
	if withETag {
		for _, t := range strings.Split(r.Header.Get("If-None-Match"), ",") {
			if strings.TrimSpace(t) == etag {
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
	}
	if ims := r.Header.Get("If-Modified-Since"); withLastMod && r.Header.Get("If-None-Match") == "" && ims != "" {
		if t, err := http.ParseTime(ims); err == nil && !lastMod.After(t) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	if r.Method == http.MethodGet {
		s.docBytes.Add(int64(len(body)))
		w.Write(body)
	}
}
