package resourcesync

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
)

// Limits applied when Options leaves them zero.
const (
	DefaultMaxBytes      = 64 << 20
	DefaultMaxEntries    = 1_000_000
	DefaultMaxTokenBytes = 1 << 20
)

// Options bounds what a Reader accepts.
type Options struct {
	// MaxBytes bounds the decompressed document size; 0 means DefaultMaxBytes.
	MaxBytes int64
	// MaxEntries bounds the number of entries; 0 means DefaultMaxEntries.
	// More than 50,000 (the Sitemap limit) is accepted with a warning.
	MaxEntries int
	// MaxTokenBytes bounds a single token: one text node (an element's
	// text, all its pieces together), tag, comment or CDATA section; 0
	// means DefaultMaxTokenBytes. The read buffer grows to hold the
	// longest token, so this, not MaxBytes, bounds a reader's memory: a
	// document is refused as soon as one token passes it, while streaming.
	MaxTokenBytes int
}

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	if o.MaxTokenBytes <= 0 {
		o.MaxTokenBytes = DefaultMaxTokenBytes
	}
	return o
}

// Reader reads a ResourceSync document (any capability, urlset or
// sitemapindex, plain or gzip) as a stream: the header, then one entry at a
// time. Memory use does not grow with the number of entries past 50,000
// (below, a hash of each <loc> is kept to find one listed twice).
type Reader struct {
	sc        *scanner
	url       string
	opts      Options
	resolver  resolver
	ns        namespaces
	warn      warnings
	dev       deviations
	strs      stringCache
	alloc     allocator
	plainURLs plainURLCache

	header     Header
	headerRead bool
	headerErr  error
	headerMD   bool // the root rs:md has been seen
	pending    bool // Header consumed the first entry's start tag
	entries    int
	done       bool
	err        error // sticky
	text       []byte
}

// NewReader returns a Reader for the document at docURL read from r. A gzip
// stream (magic bytes 1f 8b) is decompressed transparently; MaxBytes applies
// to the decompressed bytes.
func NewReader(r io.Reader, docURL string, opts Options) (*Reader, error) {
	rd := &Reader{url: docURL, opts: opts.withDefaults(), resolver: newResolver(docURL)}
	rd.header = Header{URL: docURL, MD: MD{Length: NoLength}}
	src, err := decompressed(r)
	if err != nil {
		return nil, &ParseError{URL: docURL, Line: 1, Column: 1, Msg: "bad gzip stream", Err: err}
	}
	rd.sc = newScanner(&limitReader{r: src, remaining: rd.opts.MaxBytes}, rd.opts.MaxTokenBytes)
	rd.skipLeadingSpace()
	return rd, nil
}

// decompressed returns r, or a gzip reader over it if it starts with the
// gzip magic bytes.
func decompressed(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 512)
	magic, err := br.Peek(2)
	if err != nil || magic[0] != 0x1f || magic[1] != 0x8b {
		return br, nil // a short or failing stream is reported by the scanner
	}
	return gzip.NewReader(br)
}

// skipLeadingSpace drops a byte order mark and whitespace before the XML
// declaration, warning about the whitespace.
func (r *Reader) skipLeadingSpace() {
	s := r.sc
	s.ensure(3)
	if bytes.HasPrefix(s.buf[s.pos:s.end], []byte("\xef\xbb\xbf")) {
		s.pos += 3
	}
	skipped := false
	for s.ensure(1) && isSpaceByte(s.buf[s.pos]) {
		s.pos++
		s.tokOff = s.base + int64(s.pos) // lets fill drop the space
		skipped = true
	}
	s.declOff = s.base + int64(s.pos)
	if skipped && s.ensure(5) && bytes.HasPrefix(s.buf[s.pos:s.end], []byte("<?xml")) {
		line, _ := s.position(s.declOff)
		r.warn.add(warnLeadingSpace, r.url, line, "")
	}
}

// Header reads the document up to its first entry and returns the root
// element and the root rs:md and rs:ln. Calling it again returns the same.
func (r *Reader) Header() (*Header, error) {
	if !r.headerRead {
		r.headerRead = true
		if err := r.readHeader(); err != nil {
			r.err, r.headerErr = err, err
		}
	}
	if r.headerErr != nil {
		return nil, r.headerErr
	}
	h := r.header
	return &h, nil
}

// Next returns the next entry, or io.EOF after the last. The caller owns it.
// Entries and their strings are allocated in small blocks (see arena.go), so
// a kept entry may keep a few kilobytes of its neighbours alive.
func (r *Reader) Next() (*Entry, error) {
	if !r.headerRead {
		if _, err := r.Header(); err != nil {
			return nil, err
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if r.done {
		return nil, io.EOF
	}
	e, err := r.nextEntry()
	if err != nil {
		if !errors.Is(err, io.EOF) {
			r.err = err
		}
		return nil, err
	}
	return e, nil
}

// Warnings returns what was tolerated so far, one warning per kind.
func (r *Reader) Warnings() []Warning { return r.warn.counted() }

// Parse reads a whole document into memory.
func Parse(r io.Reader, docURL string, opts Options) (*Document, error) {
	rd, err := NewReader(r, docURL, opts)
	if err != nil {
		return nil, err
	}
	h, err := rd.Header()
	if err != nil {
		return nil, err
	}
	doc := &Document{Header: *h}
	for {
		e, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		doc.Entries = append(doc.Entries, *e)
	}
	doc.Warnings = rd.Warnings()
	return doc, nil
}

// next reads a token and keeps the namespace bindings in step.
func (r *Reader) next() error {
	if err := r.sc.next(); err != nil {
		return r.fail(err)
	}
	switch r.sc.kind {
	case tokStart:
		if r.sc.nsAttrs {
			r.ns.enter(r.sc.attrs, r.sc.depth())
		}
	case tokEnd:
		r.ns.leave(r.sc.depth())
	}
	return nil
}

// fail turns a scanner or input error into a *ParseError.
func (r *Reader) fail(err error) error {
	var pe *ParseError
	var se *syntaxError
	switch {
	case errors.As(err, &pe):
		return pe
	case errors.As(err, &se):
		cause := ErrNotXML
		if se.limit {
			cause = ErrTooLarge
		}
		return r.errorAt(se.off, se.msg, cause)
	case errors.Is(err, errTokenTooLarge):
		return r.errorHere(fmt.Sprintf("a single token (text, tag or comment) longer than %d bytes", r.opts.MaxTokenBytes), ErrTooLarge)
	case errors.Is(err, ErrTooLarge):
		return r.errorHere(fmt.Sprintf("document larger than %d bytes", r.opts.MaxBytes), ErrTooLarge)
	}
	return r.errorHere("reading document", err)
}

// errorHere is a ParseError at the current token.
func (r *Reader) errorHere(msg string, cause error) *ParseError {
	return r.errorAt(r.sc.tokOff, msg, cause)
}

// errorAt is a ParseError at an absolute offset.
func (r *Reader) errorAt(off int64, msg string, cause error) *ParseError {
	line, col := r.sc.position(off)
	return &ParseError{URL: r.url, Line: line, Column: col, Msg: msg, Err: cause}
}

func (r *Reader) warnHere(kind WarnKind, detail string) {
	if r.warn.seen&(1<<kind) != 0 {
		r.warn.n[kind]++
		return
	}
	line, _ := r.sc.position(r.sc.tokOff)
	r.warn.add(kind, r.url, line, detail)
}

// stringCache interns short repeated values (types, rels, capabilities) so
// that a million entries share a few strings. The last value returned is
// checked first: lists mostly repeat one type.
type stringCache struct {
	m    map[string]string
	last string
}

const stringCacheMax = 256

func (c *stringCache) get(b []byte) string {
	if string(b) == c.last {
		return c.last
	}
	s, ok := c.m[string(b)]
	if !ok {
		s = string(b)
		if c.m == nil {
			c.m = make(map[string]string)
		}
		if len(c.m) < stringCacheMax && len(b) <= 128 {
			c.m[s] = s
		}
	}
	c.last = s
	return s
}
