package sourcetest

import (
	"fmt"
	"html"
	"net/http"
	"strings"
)

// serveRobots answers /robots.txt with a Sitemap line per set's Resource
// List (or Index).
func (s *Source) serveRobots(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	b.WriteString("User-agent: *\nDisallow: /cgi-bin/\n\n")
	for k := range s.sets {
		fmt.Fprintf(&b, "Sitemap: %s\n", s.ResourceListURL(k))
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}

// serveHTML answers /index.html with a <link rel="resourcesync"> to the
// first set's Capability List, and the same link as an HTTP header.
func (s *Source) serveHTML(w http.ResponseWriter, r *http.Request) {
	capURL := s.CapabilityListURL(0)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Link", `<`+capURL+`>; rel="resourcesync"`)
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html>\n<head>\n<title>sourcetest</title>\n"+
		"<link rel=\"resourcesync\" href=\"%s\"/>\n</head>\n<body><p>A generated ResourceSync Source.</p></body>\n</html>\n",
		html.EscapeString(capURL))
}
