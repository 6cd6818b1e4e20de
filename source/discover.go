package source

import (
	"bufio"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"

	"rsfs/fetch"
	"rsfs/origin"
	"rsfs/resourcesync"
)

// WellKnownPath is where a Source publishes its Source Description (1.1) or
// Capability List (1.0).
const WellKnownPath = "/.well-known/resourcesync"

// ErrNotFound means nothing ResourceSync was found at or around a URL.
var ErrNotFound = errors.New("no ResourceSync Source found")

// maxSniff bounds how much of a non-XML answer is read looking for links.
const maxSniff = 1 << 20

// maxHops bounds a chain of links discovery follows: resourcesync links
// from pages, up and index links between documents, Source Description
// Indexes.
const maxHops = 8

// Problem is a document discovery could not read, or something about one
// it tolerated.
type Problem struct {
	URL string `json:"url"`
	Msg string `json:"error"`
}

// discovery is the state of one Discover: the documents read (each is
// read once) and the URLs the Source's documents name, for its origin.
type discovery struct {
	s        *Source
	typed    string           // the origin of the URL the user gave
	nodes    map[string]*node // documents read, by the URL asked for and the URL answered
	votes    originVotes
	implicit *Set   // the set of documents no Capability List names
	other    string // a document of Options.Other's protocol a page links to
}

// Discover finds the Source behind rawURL: a site URL (its well-known URI,
// else its home page's resourcesync link, else its robots.txt Sitemap
// lines), the URL of any ResourceSync document (whose up and index links
// lead to its Capability List and Source Description), or a resource or
// page that links to a Capability List. The client is told to allow the
// Source's origin. With Options.Other, a document of another protocol
// found instead (the URL is one, or a page links to one and nothing
// ResourceSync is around it) stops discovery with an *OtherFound.
func Discover(ctx context.Context, rawURL string, opts Options) (*Source, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("discover %q: not an http(s) URL", rawURL)
	}
	s := newSource(rawURL, fetch.ReasonGiven, opts)
	d := &discovery{s: s, typed: s.Origin, nodes: map[string]*node{}}
	if err := d.run(ctx, u); err != nil {
		return nil, err
	}
	if len(s.sets) == 0 {
		return nil, fmt.Errorf("discover %s: %w (no document it names could be read)", rawURL, ErrNotFound)
	}
	s.Origin = d.votes.origin(d.typed)
	if s.Origin != d.typed {
		s.log.Info("the Source's documents place it at another origin than the URL given; paths are relative to theirs",
			"given", d.typed, "origin", s.Origin)
		s.policy.Admit(s.Origin, fetch.ReasonSource)
	}
	return s, nil
}

func (d *discovery) run(ctx context.Context, u *url.URL) error {
	s := d.s
	site := u.Path == "" || u.Path == "/"
	if !site {
		found, err := d.tryURL(ctx, u.String(), 0, false)
		if found || err != nil {
			return err
		}
	}
	wk := s.Origin + WellKnownPath
	found, err := d.tryURL(ctx, wk, 0, true)
	if found {
		return err
	}
	var se *fetch.StatusError
	if err != nil && !(errors.As(err, &se) && se.Code >= 400 && se.Code < 500) {
		return err
	}
	if site {
		if found, err := d.tryURL(ctx, s.Origin+"/", 0, true); found || err != nil {
			return err
		}
	}
	if found, err := d.tryRobots(ctx); found || err != nil {
		return err
	}
	if d.other != "" {
		return &OtherFound{Doc: fetch.Document{URL: d.other}}
	}
	return fmt.Errorf("discover %s: %w (no %s, no resourcesync link, no robots.txt Sitemap)", u, ErrNotFound, WellKnownPath)
}

// tryURL fetches a URL and, if it is a ResourceSync document or links to
// one, adopts it. A missing page (4xx but 401/403) is "not found" when
// missingOK, else an error.
func (d *discovery) tryURL(ctx context.Context, rawURL string, hops int, missingOK bool) (bool, error) {
	if hops > maxHops {
		return false, fmt.Errorf("discover %s: more than %d resourcesync links in a row", rawURL, maxHops)
	}
	resp, err := d.s.opts.Client.Get(ctx, rawURL, nil)
	if err != nil {
		var se *fetch.StatusError
		if missingOK && errors.As(err, &se) && se.Code >= 400 && se.Code < 500 && se.Code != 401 && se.Code != 403 {
			return false, nil
		}
		return false, fmt.Errorf("discover: %w", err)
	}
	defer resp.Body.Close()
	if link := linkHeader(resp.Header.Values("Link"), "resourcesync"); link != "" {
		return d.followLink(ctx, resolve(resp.URL, link), hops)
	}
	br := bufio.NewReader(io.LimitReader(resp.Body, d.s.maxDoc()))
	other := d.s.opts.Other
	if other != nil && other.Is(peek(br)) { // before isSitemap, which takes any gzip stream
		return false, otherDocument(resp, br, d.s.maxDoc())
	}
	if isSitemap(br) {
		return true, d.start(ctx, resp.URL, br)
	}
	links := pageLinks(br)
	if link := resourceSyncLink(links); link != "" {
		return d.followLink(ctx, resolve(resp.URL, link), hops)
	}
	if other != nil && d.other == "" {
		if link := other.Link(links); link != "" {
			d.other = resolve(resp.URL, link) // if nothing ResourceSync is found
		}
	}
	return false, nil
}

// followLink follows a resourcesync link (an HTML <link> or an HTTP Link
// header) to the Capability List it names, on whatever origin: the
// standard has that Capability List "pertain to the resource that provides
// the link" (1.0 §10.3, 1.1 §9.2), so it is the Source of the URL given,
// and its origin is admitted as the Source's documents' are.
func (d *discovery) followLink(ctx context.Context, link string, hops int) (bool, error) {
	d.votes.add(levelCapabilityList, link)
	d.s.AllowDoc(link)
	return d.tryURL(ctx, link, hops+1, false)
}

func (s *Source) maxDoc() int64 {
	if s.opts.Parse.MaxBytes > 0 {
		return s.opts.Parse.MaxBytes
	}
	return resourcesync.DefaultMaxBytes
}

// start adopts the first ResourceSync document found: a Source Description
// (or Index) or 1.0 Capability List Index is read down; any other document
// is climbed from, through its up and index links, to the top of its
// Source. Of a list, the header is enough (its entries are read when the
// Source loads).
func (d *discovery) start(ctx context.Context, docURL string, body io.Reader) error {
	d.s.Entry = docURL
	n, err := d.readNode(docURL, body)
	if err != nil {
		return fmt.Errorf("discover: %w", err)
	}
	return d.startNode(ctx, n)
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

// tryRobots climbs from each Sitemap line of robots.txt. A line whose
// document cannot be read is a warning; lines that are not ResourceSync
// documents are read as Resource Lists only when no line is one.
func (d *discovery) tryRobots(ctx context.Context) (bool, error) {
	s := d.s
	resp, err := s.opts.Client.Get(ctx, s.Origin+"/robots.txt", nil)
	if err != nil {
		var se *fetch.StatusError
		if errors.As(err, &se) && se.Code >= 400 && se.Code < 500 {
			return false, nil
		}
		return false, fmt.Errorf("discover: %w", err)
	}
	lines := robotsSitemaps(resp)
	resp.Body.Close()
	if len(lines) == 0 {
		return false, nil
	}
	s.Entry = resp.URL
	var plain []*node
	for _, u := range lines {
		n, err := d.fetchNode(ctx, u)
		if err != nil {
			d.problem(u, fmt.Errorf("robots.txt Sitemap line: %w", err))
			continue
		}
		if n.cap == "" {
			plain = append(plain, n)
			continue
		}
		if err := d.startNode(ctx, n); err != nil {
			return true, err
		}
	}
	if len(s.sets) == 0 {
		for _, n := range plain {
			d.warn(n.url, "robots.txt names a sitemap without rs:md capability; reading it as a Resource List")
			d.implicitDoc(resourcesync.CapResourceList, n.url)
		}
	} else {
		for _, n := range plain {
			d.warn(n.url, "robots.txt names a sitemap that is not a ResourceSync document; skipped")
		}
	}
	if len(s.sets) == 0 {
		return true, fmt.Errorf("discover %s: %w (no robots.txt Sitemap line could be read)", resp.URL, ErrNotFound)
	}
	return true, nil
}

// robotsSitemaps returns the Sitemap lines of a robots.txt answer,
// resolved.
func robotsSitemaps(resp *fetch.Response) []string {
	var out []string
	sc := bufio.NewScanner(io.LimitReader(resp.Body, maxSniff))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		name, value, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(name), "sitemap") && strings.TrimSpace(value) != "" {
			out = append(out, resolve(resp.URL, strings.TrimSpace(value)))
		}
	}
	return out
}

// GetDoc fetches and parses a whole (small) document, and logs what the
// parser tolerated.
func (s *Source) GetDoc(ctx context.Context, docURL string) (*resourcesync.Document, error) {
	doc, _, err := s.GetDocIfChanged(ctx, docURL, nil)
	return doc, err
}

// GetDocIfChanged is GetDoc by a GET conditional on v (unconditional when v
// is nil). A document unchanged since v (304) is (nil, nil, nil); otherwise
// the answer's validators come with it, for the next conditional GET.
func (s *Source) GetDocIfChanged(ctx context.Context, docURL string, v *fetch.Validators) (*resourcesync.Document, *fetch.Validators, error) {
	resp, err := s.opts.Client.Get(ctx, docURL, v)
	if errors.Is(err, fetch.ErrNotModified) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	doc, err := resourcesync.Parse(resp.Body, resp.URL, s.opts.Parse)
	if err != nil {
		return nil, nil, err
	}
	s.warn(doc.Warnings)
	return doc, resp.Validators(), nil
}

// warn logs what the parser tolerated in a document the Source read.
func (s *Source) warn(ws []resourcesync.Warning) {
	for _, w := range ws {
		s.log.Warn("tolerated: "+w.Msg, "url", w.URL, "line", w.Line)
	}
}

// isSitemap peeks at the start of a body: gzip, or XML whose root element
// is urlset or sitemapindex, whatever its prefix (DSpace writes
// <sm:urlset xmlns:sm="...">). The parser then holds the root to the
// Sitemap namespace, so a root in another one is an error that names it,
// not a page with no Source.
func isSitemap(br *bufio.Reader) bool {
	head := peek(br)
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		return true
	}
	dec := xml.NewDecoder(bytes.NewReader(head))
	dec.Strict = false
	// Only the root's name is read: any declared encoding will do (the
	// parser decides whether it reads the document).
	dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if se, ok := tok.(xml.StartElement); ok {
			return se.Name.Local == "urlset" || se.Name.Local == "sitemapindex"
		}
	}
}

var (
	linkTagRe  = regexp.MustCompile(`(?is)<link\b[^>]*>`)
	relAttrRe  = regexp.MustCompile(`(?is)\brel\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))`)
	hrefAttrRe = regexp.MustCompile(`(?is)\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))`)
	typeAttrRe = regexp.MustCompile(`(?is)\btype\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))`)
)

// linkHeader returns the target of the first Link header value whose rel
// (a space-separated list) holds rel.
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
				if strings.EqualFold(strings.TrimSpace(name), "rel") && hasToken(strings.Trim(strings.TrimSpace(value), `"`), rel) {
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

// originOfString returns the origin of a URL in the canonical form of
// package origin; "" if it has none.
func originOfString(raw string) string {
	o, _ := origin.Of(raw)
	return o
}
