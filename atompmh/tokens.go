package atompmh

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
)

// token returns the next token with depth and xml:base in step: after a
// StartElement, r.depth is the element's depth (the root is 1) and
// r.bases.top() its base; after an EndElement, its parent's. Comments,
// processing instructions and white space between elements are returned
// too. A document type declaration, a second root and text outside the
// root are errors.
func (r *Reader) token() (xml.Token, error) {
	r.prevLine, r.prevCol = r.line, r.col
	r.line, r.col = r.pos()
	r.cnt.tokStart = r.cnt.n
	tok, err := r.dec.Token()
	if err != nil {
		if r.cnt.n == r.cnt.tokStart {
			// The decoder hands out the text read before an input error
			// first; the error is that text's.
			r.line, r.col = r.prevLine, r.prevCol
		}
		return nil, r.decodeError(err)
	}
	switch t := tok.(type) {
	case xml.StartElement:
		if r.rootClosed {
			return nil, r.errorAtToken("element after the root element", ErrNotXML)
		}
		r.depth++
		if r.depth > r.opts.MaxDepth {
			return nil, r.errorAtToken(fmt.Sprintf("elements nested deeper than %d", r.opts.MaxDepth), ErrTooLarge)
		}
		r.pushBase(t.Attr)
	case xml.EndElement:
		r.depth--
		r.bases.pop()
		if r.depth == 0 {
			r.rootClosed = true
		}
	case xml.CharData:
		if (r.depth == 0) && len(bytes.TrimSpace(t)) > 0 {
			return nil, r.errorAtToken("text outside the root element", ErrNotXML)
		}
	case xml.Directive:
		return nil, r.errorAtToken("document type declaration refused (no entity is expanded)", ErrNotXML)
	}
	return tok, nil
}

// decodeError turns a decoder or input error into a *ParseError.
func (r *Reader) decodeError(err error) error {
	var se *xml.SyntaxError
	switch {
	case errors.Is(err, io.EOF):
		if r.depth == 0 && r.rootClosed {
			return io.EOF
		}
		return r.errorHere("unexpected end of document", ErrNotXML)
	case errors.Is(err, ErrTooLarge):
		return r.errorHere(fmt.Sprintf("document larger than %d bytes", r.opts.MaxBytes), ErrTooLarge)
	case errors.Is(err, errTokenTooLarge):
		return r.errorAtToken(fmt.Sprintf("token longer than %d bytes", r.opts.MaxTokenBytes), ErrTooLarge)
	case errors.As(err, &se):
		return r.errorHere(strings.TrimPrefix(se.Msg, "xml: "), ErrNotXML)
	}
	if strings.HasPrefix(err.Error(), "xml: ") { // e.g. an unsupported encoding
		return r.errorHere(strings.TrimPrefix(err.Error(), "xml: "), ErrNotXML)
	}
	return r.errorHere("reading document", err)
}

// skip reads to the end of the element whose start tag was just read.
func (r *Reader) skip() error {
	end := r.depth - 1
	for r.depth > end {
		if _, err := r.token(); err != nil {
			return err
		}
	}
	return nil
}

// text returns the text inside the element whose start tag was just read,
// child elements' text included, with surrounding white space trimmed.
func (r *Reader) text() (string, error) {
	line, col := r.line, r.col
	defer func() { r.line, r.col = line, col }() // warnings name the element
	end := r.depth - 1
	b := r.textBuf[:0]
	defer func() { r.textBuf = b[:0] }() // reused: one allocation, the string
	for r.depth > end {
		tok, err := r.token()
		if err != nil {
			return "", err
		}
		if cd, ok := tok.(xml.CharData); ok {
			if int64(len(b)+len(cd)) > r.opts.MaxTokenBytes {
				return "", r.errorAtToken(fmt.Sprintf("element text longer than %d bytes", r.opts.MaxTokenBytes), ErrTooLarge)
			}
			b = append(b, cd...)
		}
	}
	return string(bytes.TrimSpace(b)), nil
}

// baseStack holds the base URL of each open element, the document URL
// under them. A nil base (no document URL, or one that cannot be parsed)
// keeps references as published.
type baseStack struct {
	s []*url.URL
}

func newBaseStack(docURL string) baseStack {
	var u *url.URL
	if docURL != "" {
		if p, err := url.Parse(docURL); err == nil {
			u = p
		}
	}
	return baseStack{s: []*url.URL{u}}
}

func (b *baseStack) top() *url.URL { return b.s[len(b.s)-1] }

func (b *baseStack) pop() {
	if len(b.s) > 1 {
		b.s = b.s[:len(b.s)-1]
	}
}

// pushBase pushes the base of the element with attrs: its xml:base
// resolved against its parent's base (RFC 3986 section 5), or the parent's.
func (r *Reader) pushBase(attrs []xml.Attr) {
	parent := r.bases.top()
	for _, a := range attrs {
		if a.Name.Space == xmlNS && a.Name.Local == "base" {
			ref, err := url.Parse(strings.TrimSpace(a.Value))
			switch {
			case err != nil:
				r.warn(onceBadURL, "xml:base that cannot be parsed; ignored: "+quoteShort(a.Value))
			case parent != nil:
				parent = parent.ResolveReference(ref)
			case ref.IsAbs():
				parent = ref
			}
			break
		}
	}
	r.bases.s = append(r.bases.s, parent)
}

// resolve resolves ref against the current element's base.
func (r *Reader) resolve(ref string) string {
	ref = strings.TrimSpace(ref)
	base := r.bases.top()
	if base == nil {
		return ref
	}
	u, err := url.Parse(ref)
	if err != nil {
		r.warn(onceBadURL, "URL that cannot be parsed; kept as published: "+quoteShort(ref))
		return ref
	}
	return base.ResolveReference(u).String()
}

// attr returns the value of the un-namespaced attribute local.
func attr(attrs []xml.Attr, local string) (string, bool) {
	for _, a := range attrs {
		if a.Name.Space == "" && a.Name.Local == local {
			return a.Value, true
		}
	}
	return "", false
}

// ianaRel is the prefix of registered relation types written as IRIs
// (RFC 4287 section 4.2.7.2).
const ianaRel = "http://www.iana.org/assignments/relation/"

// linkRel returns a link's relation: "alternate" if absent, the registered
// name if written as an IANA IRI.
func linkRel(attrs []xml.Attr) string {
	rel, ok := attr(attrs, "rel")
	rel = strings.TrimSpace(rel)
	if !ok || rel == "" {
		return "alternate"
	}
	return strings.TrimPrefix(rel, ianaRel)
}

// stringCache interns short repeated values (media types) so that a
// million links share a few strings.
type stringCache struct {
	m    map[string]string
	last string
}

func (c *stringCache) get(s string) string {
	if s == c.last {
		return c.last
	}
	if v, ok := c.m[s]; ok {
		c.last = v
		return v
	}
	if c.m == nil {
		c.m = make(map[string]string)
	}
	if len(c.m) < 256 && len(s) <= 128 {
		c.m[s] = s
	}
	c.last = s
	return s
}

// pos is the decoder's position, its column at least 1: InputPos says 0
// when the decoder has just unread the newline it read (found by FuzzParse).
func (r *Reader) pos() (line, col int) {
	line, col = r.dec.InputPos()
	return line, max(col, 1)
}
