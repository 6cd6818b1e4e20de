package source

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/gzip"

	"rsfs/fetch"
)

// atomNS is the Atom namespace (RFC 4287), whose feed root marks an Atom
// feed; package atompmh reads it.
const atomNS = "http://www.w3.org/2005/Atom"

// sniffPeek is how much of a body is looked at to tell what it is.
const sniffPeek = 4096

var gzipMagic = []byte{0x1f, 0x8b}

// feedFound stops discovery when the URL is not a ResourceSync Source but
// an Atom feed (an Atom-PMH feed, mounted by package atomfeed): the URL
// answered an Atom feed document, or a page whose
// <link rel="alternate" type="application/atom+xml"> names one and no
// ResourceSync document was found around it. Discover turns it into a
// Found of protocol AtomPMH.
type feedFound struct{ doc fetch.Document }

// feedDocument is the feedFound of the feed document answered in resp,
// whose body br holds (read through a limit of max bytes). The body is
// kept, so the first harvest reads it instead of fetching it again, unless
// it reached the limit: it may be cut short, and the harvest reads it
// again.
func feedDocument(resp *fetch.Response, br *bufio.Reader, max int64) *feedFound {
	ff := &feedFound{doc: fetch.Document{URL: resp.URL}}
	doc, err := io.ReadAll(br)
	if err == nil && int64(len(doc)) < max {
		ff.doc.Body, ff.doc.Validators = doc, resp.Validators()
	}
	return ff
}

func (f *feedFound) Error() string {
	return fmt.Sprintf("%s is an Atom feed, not a ResourceSync Source", f.doc.URL)
}

// isAtomFeed reports whether the document's first element is an Atom
// feed, looking through gzip (package atompmh reads a gzip stream too).
func isAtomFeed(br *bufio.Reader) bool {
	dec := xml.NewDecoder(bytes.NewReader(xmlHead(br)))
	dec.Strict = false
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if se, ok := tok.(xml.StartElement); ok {
			return se.Name.Local == "feed" && se.Name.Space == atomNS
		}
	}
}

// xmlHead peeks at the start of a body as XML: its first bytes, or, when
// they are a gzip stream, what they decompress to (as much as they do).
func xmlHead(br *bufio.Reader) []byte {
	head, _ := br.Peek(sniffPeek)
	if !bytes.HasPrefix(head, gzipMagic) {
		return head
	}
	zr, err := gzip.NewReader(bytes.NewReader(head))
	if err != nil {
		return nil
	}
	out, _ := io.ReadAll(io.LimitReader(zr, sniffPeek)) // a truncated stream gives what it holds
	return out
}

// htmlLinks finds, in HTML, the first <link rel="resourcesync" href>
// and the first <link rel="alternate" type="application/atom+xml" href>;
// rel is a space-separated list of link types.
func htmlLinks(br *bufio.Reader) (resourceSync, atom string) {
	body, _ := io.ReadAll(io.LimitReader(br, maxSniff))
	for _, tag := range linkTagRe.FindAll(body, -1) {
		rel := relAttrRe.FindSubmatch(tag)
		href := hrefAttrRe.FindSubmatch(tag)
		if rel == nil || href == nil {
			continue
		}
		rels := string(bytes.Join(rel[1:], nil))
		target := strings.TrimSpace(string(bytes.Join(href[1:], nil)))
		switch {
		case resourceSync == "" && hasToken(rels, "resourcesync"):
			resourceSync = target
		case atom == "" && hasToken(rels, "alternate") && isAtomType(tag):
			atom = target
		}
	}
	return resourceSync, atom
}

func isAtomType(tag []byte) bool {
	m := typeAttrRe.FindSubmatch(tag)
	if m == nil {
		return false
	}
	typ, _, _ := strings.Cut(string(bytes.Join(m[1:], nil)), ";")
	return strings.EqualFold(strings.TrimSpace(typ), "application/atom+xml")
}
