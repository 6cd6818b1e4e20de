package source

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"

	"rsfs/fetch"
	"rsfs/resourcesync"
)

// WellKnownPath is where a Source publishes its Source Description (1.1) or
// Capability List (1.0).
const WellKnownPath = "/.well-known/resourcesync"

// ErrNotFound means nothing ResourceSync was found at or around a URL.
var ErrNotFound = errors.New("no ResourceSync Source found")

// maxSniff bounds how much of a non-XML answer is read looking for links.
const maxSniff = 1 << 20

// Discover finds the Source behind rawURL: a site URL (its well-known URI,
// else its robots.txt Sitemap lines), the URL of any ResourceSync document,
// or a resource or page that links to a Capability List. The client is told
// to allow the Source's origin.
func Discover(ctx context.Context, rawURL string, opts Options) (*Source, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("discover %q: not an http(s) URL", rawURL)
	}
	s := newSource(originOf(u), opts)
	if err := s.discover(ctx, u); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Source) discover(ctx context.Context, u *url.URL) error {
	site := u.Path == "" || u.Path == "/"
	if !site {
		found, err := s.tryURL(ctx, u.String(), 0, false)
		if found || err != nil {
			return err
		}
	}
	wk := s.Origin + WellKnownPath
	found, err := s.tryURL(ctx, wk, 0, true)
	if found {
		return err
	}
	var se *fetch.StatusError
	if err != nil && !(errors.As(err, &se) && se.Code >= 400 && se.Code < 500) {
		return err
	}
	if site {
		if found, err := s.tryURL(ctx, s.Origin+"/", 0, true); found || err != nil {
			return err
		}
	}
	if found, err := s.tryRobots(ctx); found || err != nil {
		return err
	}
	return fmt.Errorf("discover %s: %w (no %s, no resourcesync link, no robots.txt Sitemap)", u, ErrNotFound, WellKnownPath)
}

// tryURL fetches a URL and, if it is a ResourceSync document or links to
// one, adopts it. A missing page (4xx but 401/403) is "not found" when
// missingOK, else an error.
func (s *Source) tryURL(ctx context.Context, rawURL string, depth int, missingOK bool) (bool, error) {
	if depth > 3 {
		return false, fmt.Errorf("discover %s: too many resourcesync links", rawURL)
	}
	resp, err := s.opts.Client.Get(ctx, rawURL, nil)
	if err != nil {
		var se *fetch.StatusError
		if missingOK && errors.As(err, &se) && se.Code >= 400 && se.Code < 500 && se.Code != 401 && se.Code != 403 {
			return false, nil
		}
		return false, fmt.Errorf("discover: %w", err)
	}
	defer resp.Body.Close()
	if link := linkHeader(resp.Header.Values("Link"), "resourcesync"); link != "" {
		return s.tryURL(ctx, resolve(resp.URL, link), depth+1, false)
	}
	br := bufio.NewReader(io.LimitReader(resp.Body, s.maxDoc()))
	if isSitemap(br) {
		return true, s.adopt(ctx, resp.URL, br)
	}
	if link := htmlResourceSyncLink(br); link != "" {
		return s.tryURL(ctx, resolve(resp.URL, link), depth+1, false)
	}
	return false, nil
}

func (s *Source) maxDoc() int64 {
	if s.opts.Parse.MaxBytes > 0 {
		return s.opts.Parse.MaxBytes
	}
	return resourcesync.DefaultMaxBytes
}

// adopt builds the sets from the first document found. Only a Source
// Description or Capability List is read whole; of any other document the
// header is enough (its entries are read when the Source loads).
func (s *Source) adopt(ctx context.Context, docURL string, body io.Reader) error {
	r, err := resourcesync.NewReader(body, docURL, s.opts.Parse)
	if err != nil {
		return fmt.Errorf("discover: %w", err)
	}
	h, err := r.Header()
	if err != nil {
		return fmt.Errorf("discover: %w", err)
	}
	s.Entry = docURL
	capability := h.Capability()
	switch {
	case capability == resourcesync.CapDescription || capability == resourcesync.CapCapabilityList:
		doc, err := readRest(r, h)
		if err != nil {
			return fmt.Errorf("discover: %w", err)
		}
		return s.adoptCapabilities(ctx, doc)
	case capability == "":
		s.log.Warn("document has no rs:md capability; reading it as a Resource List", "url", docURL)
		capability = resourcesync.CapResourceList
	case !capability.Known():
		return fmt.Errorf("discover %s: unknown capability %q", docURL, capability)
	}
	s.warn(r.Warnings())
	set := &Set{}
	s.addSetDoc(set, capability, docURL)
	s.Sets = append(s.Sets, set)
	return nil
}

// readRest reads the remaining entries of a document whose header is read.
func readRest(r *resourcesync.Reader, h *resourcesync.Header) (*resourcesync.Document, error) {
	doc := &resourcesync.Document{Header: *h}
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			doc.Warnings = r.Warnings()
			return doc, nil
		}
		if err != nil {
			return nil, err
		}
		doc.Entries = append(doc.Entries, *e)
	}
}

func (s *Source) adoptCapabilities(ctx context.Context, doc *resourcesync.Document) error {
	s.warn(doc.Warnings)
	switch {
	case doc.Header.Capability() == resourcesync.CapDescription:
		return s.adoptDescription(ctx, doc)
	case doc.Header.Root == resourcesync.SitemapIndex:
		for _, e := range doc.Entries {
			if err := s.addCapabilityList(ctx, e.Loc); err != nil {
				return err
			}
		}
		return nil
	default:
		s.Sets = append(s.Sets, s.setFromCapabilityList(doc.Header.URL, doc))
		return nil
	}
}

func (s *Source) adoptDescription(ctx context.Context, doc *resourcesync.Document) error {
	for _, e := range doc.Entries {
		if e.MD.Capability != "" && e.MD.Capability != resourcesync.CapCapabilityList {
			s.log.Warn("source description entry is not a capability list; skipped",
				"url", e.Loc, "capability", e.MD.Capability)
			continue
		}
		if err := s.addCapabilityList(ctx, e.Loc); err != nil {
			return err
		}
	}
	if len(s.Sets) == 0 {
		return fmt.Errorf("discover %s: %w (the Source Description lists no Capability List)", doc.Header.URL, ErrNotFound)
	}
	return nil
}

func (s *Source) addCapabilityList(ctx context.Context, capURL string) error {
	s.opts.Client.AllowOrigin(originOfString(capURL))
	doc, err := s.getDoc(ctx, capURL)
	if err != nil {
		return fmt.Errorf("read capability list: %w", err)
	}
	if doc.Header.Capability() != resourcesync.CapCapabilityList {
		return fmt.Errorf("read capability list %s: capability is %q", capURL, doc.Header.Capability())
	}
	s.Sets = append(s.Sets, s.setFromCapabilityList(capURL, doc))
	return nil
}

func (s *Source) setFromCapabilityList(capURL string, doc *resourcesync.Document) *Set {
	set := &Set{URL: capURL, Links: doc.Header.Links}
	for _, e := range doc.Entries {
		c := e.MD.Capability
		if c == "" {
			s.log.Warn("capability list entry without capability; skipped", "list", capURL, "url", e.Loc)
			continue
		}
		s.addSetDoc(set, c, e.Loc)
		for _, l := range e.Links {
			if l.Rel == "hub" {
				set.Hubs = append(set.Hubs, Channel{Capability: c, Topic: e.Loc, Hub: l.Href})
			}
		}
	}
	return set
}

// tryRobots adopts the Sitemap lines of robots.txt as Resource Lists.
func (s *Source) tryRobots(ctx context.Context) (bool, error) {
	resp, err := s.opts.Client.Get(ctx, s.Origin+"/robots.txt", nil)
	if err != nil {
		var se *fetch.StatusError
		if errors.As(err, &se) && se.Code >= 400 && se.Code < 500 {
			return false, nil
		}
		return false, fmt.Errorf("discover: %w", err)
	}
	defer resp.Body.Close()
	set := &Set{}
	sc := bufio.NewScanner(io.LimitReader(resp.Body, maxSniff))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		name, value, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(name), "sitemap") {
			s.addSetDoc(set, resourcesync.CapResourceList, resolve(resp.URL, strings.TrimSpace(value)))
		}
	}
	if len(set.Docs) == 0 {
		return false, nil
	}
	s.Entry = resp.URL
	s.Sets = append(s.Sets, set)
	return true, nil
}

// getDoc fetches and parses a whole (small) document.
func (s *Source) getDoc(ctx context.Context, docURL string) (*resourcesync.Document, error) {
	resp, err := s.opts.Client.Get(ctx, docURL, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	doc, err := resourcesync.Parse(resp.Body, resp.URL, s.opts.Parse)
	if err != nil {
		return nil, err
	}
	s.warn(doc.Warnings)
	return doc, nil
}

func (s *Source) warn(ws []resourcesync.Warning) {
	for _, w := range ws {
		s.log.Warn("tolerated: "+w.Msg, "url", w.URL, "line", w.Line)
	}
}

// isSitemap peeks at the start of a body: gzip, or XML whose root is
// urlset or sitemapindex.
func isSitemap(br *bufio.Reader) bool {
	head, _ := br.Peek(4096)
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		return true
	}
	return bytes.Contains(head, []byte("<urlset")) || bytes.Contains(head, []byte("<sitemapindex"))
}

var (
	linkTagRe  = regexp.MustCompile(`(?is)<link\b[^>]*>`)
	relAttrRe  = regexp.MustCompile(`(?is)\brel\s*=\s*["']?([^"'\s>]+)`)
	hrefAttrRe = regexp.MustCompile(`(?is)\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))`)
)

// htmlResourceSyncLink finds <link rel="resourcesync" href="..."> in HTML.
func htmlResourceSyncLink(br *bufio.Reader) string {
	body, _ := io.ReadAll(io.LimitReader(br, maxSniff))
	for _, tag := range linkTagRe.FindAll(body, -1) {
		rel := relAttrRe.FindSubmatch(tag)
		if rel == nil || !hasToken(string(rel[1]), "resourcesync") {
			continue
		}
		if m := hrefAttrRe.FindSubmatch(tag); m != nil {
			return string(bytes.Join(m[1:], nil))
		}
	}
	return ""
}

// linkHeader returns the target of the first Link header value with rel.
func linkHeader(values []string, rel string) string {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			target, params, ok := strings.Cut(part, ";")
			if !ok {
				continue
			}
			target = strings.Trim(strings.TrimSpace(target), "<>")
			for _, p := range strings.Split(params, ";") {
				name, value, _ := strings.Cut(strings.TrimSpace(p), "=")
				if strings.EqualFold(name, "rel") && hasToken(strings.Trim(value, `"`), rel) {
					return target
				}
			}
		}
	}
	return ""
}

func hasToken(list, tok string) bool {
	for _, f := range strings.Fields(list) {
		if strings.EqualFold(f, tok) {
			return true
		}
	}
	return false
}

func resolve(base, ref string) string {
	b, err := url.Parse(base)
	if err != nil {
		return ref
	}
	r, err := url.Parse(ref)
	if err != nil {
		return ref
	}
	return b.ResolveReference(r).String()
}

// originOf returns scheme://host[:port] in lower case, without a default
// port.
func originOf(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	port := u.Port()
	if port == "" || (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		return scheme + "://" + host
	}
	return scheme + "://" + host + ":" + port
}

// URLOrigin returns scheme://host[:port] of a URL as a Source's Origin
// field holds it (lower case, no default port); "" if it does not parse.
func URLOrigin(raw string) string { return originOfString(raw) }

func originOfString(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return originOf(u)
}
