package randsource

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// serve answers documents, packages and resources with an ETag and a
// Last-Modified, conditional GETs (If-None-Match, If-Modified-Since),
// HEAD and Range, all through http.ServeContent; anything else is 404.
func (s *Source) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	path := r.URL.Path
	s.mu.Lock()
	body, ok := s.render(path)
	var mod time.Time
	ctype := "application/xml"
	var etag string
	if ok {
		etag = etagOf(body)
		// A document's Last-Modified is when its bytes last changed.
		d, seen := s.docs[path]
		if !seen || d.etag != etag {
			d = docState{etag: etag, mod: time.Now()}
			s.docs[path] = d
		}
		mod = d.mod
	} else if b, ct, found := s.renderDump(path); found {
		body, ok, mod, ctype, etag = b, true, s.listAt, ct, etagOf(b)
	} else if p := s.packageAt(path); p != nil {
		body, ok, mod, ctype, etag = p.body, true, p.until, "application/zip", etagOf(p.body)
	} else if v, found := s.files[path]; found {
		body, ok, mod, ctype, etag = v.body, true, v.lastmod, "text/plain", `"`+v.md5+`"`
	}
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("ETag", etag)
	w.Header().Set("Content-Type", ctype)
	http.ServeContent(w, r, "", mod, bytes.NewReader(body))
}

func (s *Source) packageAt(path string) *pkg {
	if !strings.HasPrefix(path, pkgDir) {
		return nil
	}
	for _, p := range s.pkgs {
		if pkgPath(p.n) == path {
			return p
		}
	}
	return nil
}

func etagOf(b []byte) string {
	h := md5.Sum(b)
	return fmt.Sprintf(`"%s"`, hex.EncodeToString(h[:]))
}
