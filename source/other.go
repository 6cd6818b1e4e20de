package source

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"rsfs/fetch"
)

// Other recognizes, while discovery walks, the documents of another
// protocol (package discover's Atom feeds): a URL that answers one is not
// read as a Sitemap, and a page that links to one, when nothing
// ResourceSync is found around it, leads there. Discover then stops with
// an *OtherFound. source knows nothing of what the other protocol is.
type Other interface {
	// Is reports whether an answer whose first bytes are head (up to
	// sniffPeek of them) is a document of the other protocol.
	Is(head []byte) bool
	// Link returns the target of the first of a page's links that names
	// a document of the other protocol, as written; "" for none.
	Link(links []PageLink) string
}

// PageLink is a <link> element of an HTML page, its attributes as
// written: Rel is a space-separated list of link types.
type PageLink struct{ Rel, Type, Href string }

// HasRel reports whether the link's rel names the link type rel, in any
// case.
func (l PageLink) HasRel(rel string) bool { return hasToken(l.Rel, rel) }

// OtherFound stops discovery when Options.Other recognized what the URL is:
// the URL, or a URL discovery tried, answered a document of the other
// protocol, or a page links to one and no ResourceSync document was found
// around it.
type OtherFound struct {
	// Doc is the document found: its URL, and its body and validators
	// when discovery read it whole (not when it reached the size limit:
	// it may be cut short, and its reader fetches it again).
	Doc fetch.Document
}

func (f *OtherFound) Error() string {
	return fmt.Sprintf("%s is not a ResourceSync Source", f.Doc.URL)
}

// sniffPeek is how much of a body is looked at to tell what it is.
const sniffPeek = 4096

// peek is the start of a body, up to sniffPeek bytes.
func peek(br *bufio.Reader) []byte {
	head, _ := br.Peek(sniffPeek)
	return head
}

// otherDocument is the OtherFound of the document answered in resp, whose
// body br holds (read through a limit of max bytes).
func otherDocument(resp *fetch.Response, br *bufio.Reader, max int64) *OtherFound {
	f := &OtherFound{Doc: fetch.Document{URL: resp.URL}}
	doc, err := io.ReadAll(br)
	if err == nil && int64(len(doc)) < max {
		f.Doc.Body, f.Doc.Validators = doc, resp.Validators()
	}
	return f
}

// pageLinks is the <link> elements of an HTML page (up to maxSniff bytes
// of it) that have a rel and an href, in order.
func pageLinks(br *bufio.Reader) []PageLink {
	body, _ := io.ReadAll(io.LimitReader(br, maxSniff))
	var out []PageLink
	for _, tag := range linkTagRe.FindAll(body, -1) {
		rel := relAttrRe.FindSubmatch(tag)
		href := hrefAttrRe.FindSubmatch(tag)
		if rel == nil || href == nil {
			continue
		}
		l := PageLink{Rel: string(bytes.Join(rel[1:], nil)), Href: strings.TrimSpace(string(bytes.Join(href[1:], nil)))}
		if typ := typeAttrRe.FindSubmatch(tag); typ != nil {
			l.Type = string(bytes.Join(typ[1:], nil))
		}
		out = append(out, l)
	}
	return out
}

// resourceSyncLink is the target of the first rel="resourcesync" link; ""
// for none.
func resourceSyncLink(links []PageLink) string {
	for _, l := range links {
		if l.HasRel("resourcesync") {
			return l.Href
		}
	}
	return ""
}
