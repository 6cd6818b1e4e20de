package atompmh

import (
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// Limits applied when Options leaves them zero.
const (
	DefaultMaxBytes      = 64 << 20
	DefaultMaxEntries    = 1_000_000
	DefaultMaxTokenBytes = 1 << 20
	DefaultMaxDepth      = 256
	DefaultMaxWarnings   = 100
)

// Options bounds what a Reader accepts.
type Options struct {
	// MaxBytes bounds the decompressed document; 0 means DefaultMaxBytes.
	MaxBytes int64
	// MaxEntries bounds the entries of one document; 0 means DefaultMaxEntries.
	MaxEntries int
	// MaxTokenBytes bounds one token (a tag with its attributes, a run of
	// text, a comment) and one element's text; 0 means DefaultMaxTokenBytes.
	MaxTokenBytes int64
	// MaxDepth bounds element nesting; 0 means DefaultMaxDepth.
	MaxDepth int
	// MaxWarnings bounds the warnings kept per document (the rest are
	// counted); 0 means DefaultMaxWarnings.
	MaxWarnings int
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
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	if o.MaxWarnings <= 0 {
		o.MaxWarnings = DefaultMaxWarnings
	}
	return o
}

// Reader reads an Atom Feed Document as a stream: the head, then one entry
// at a time. Memory use does not grow with the number of entries.
type Reader struct {
	url   string
	opts  Options
	cnt   *counter
	dec   *xml.Decoder
	bases baseStack
	depth int

	feed       Feed
	headerRead bool
	headerErr  error
	pending    bool // the head ended at an entry's start tag, not yet read
	rootClosed bool
	entries    int
	done       bool
	err        error // sticky

	line, col         int // start of the current token
	prevLine, prevCol int // start of the token before
	warned            uint32
	suppressed        int
	strs              stringCache
	textBuf           []byte // text's buffer, reused
}

// NewReader returns a Reader for the document at docURL read from r. A gzip
// stream (magic bytes 1f 8b) is decompressed transparently; MaxBytes
// applies to the decompressed bytes.
func NewReader(r io.Reader, docURL string, opts Options) (*Reader, error) {
	rd := &Reader{url: docURL, opts: opts.withDefaults(), line: 1, col: 1}
	rd.feed.URL = docURL
	src, err := decompressed(r)
	if err != nil {
		return nil, &ParseError{URL: docURL, Line: 1, Column: 1, Msg: "bad gzip stream", Err: err}
	}
	rd.cnt = &counter{r: src, max: rd.opts.MaxBytes, maxToken: rd.opts.MaxTokenBytes}
	rd.dec = xml.NewDecoder(rd.cnt)
	rd.dec.Strict = true
	rd.dec.CharsetReader = asciiOnly
	rd.bases = newBaseStack(docURL)
	return rd, nil
}

// decompressed returns r as a ByteReader, through gzip if it starts with
// the gzip magic bytes.
func decompressed(r io.Reader) (io.ByteReader, error) {
	br := bufio.NewReaderSize(r, 32<<10)
	magic, err := br.Peek(2)
	if err != nil || magic[0] != 0x1f || magic[1] != 0x8b {
		return br, nil // a short or failing stream is reported by the decoder
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, err
	}
	return bufio.NewReaderSize(zr, 32<<10), nil
}

// asciiOnly lets the decoder read a document declared US-ASCII (a subset
// of UTF-8); any other declared encoding is refused.
func asciiOnly(charset string, in io.Reader) (io.Reader, error) {
	switch strings.ToLower(charset) {
	case "us-ascii", "ascii":
		return in, nil
	}
	return nil, fmt.Errorf("encoding %q: only UTF-8 is read", charset)
}

// Header reads the document up to its first entry and returns the head.
// Feed metadata that comes after the first entry is applied as it is met
// (with a warning): Feed returns the head as it stands.
func (r *Reader) Header() (*Feed, error) {
	if !r.headerRead {
		r.headerRead = true
		if err := r.readHeader(); err != nil {
			r.err, r.headerErr = err, err
		}
	}
	if r.headerErr != nil {
		return nil, r.headerErr
	}
	f := r.Feed()
	return &f, nil
}

// Feed returns the head read so far and the warnings, without entries.
func (r *Reader) Feed() Feed {
	f := r.feed
	f.Warnings = r.Warnings()
	return f
}

// Next returns the next entry, or io.EOF after the last. Entries that miss
// atom:id or a readable atom:updated are skipped with a warning. After an
// error, Next keeps returning it.
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
		if errors.Is(err, io.EOF) {
			r.done = true
		} else {
			r.err = err
		}
		return nil, err
	}
	return e, nil
}

// Warnings returns what was tolerated or skipped so far.
func (r *Reader) Warnings() []Warning {
	w := r.feed.Warnings
	if r.suppressed > 0 {
		w = append(w[:len(w):len(w)], Warning{URL: r.url, Line: r.line, Column: r.col,
			Msg: fmt.Sprintf("%d more warnings not shown", r.suppressed)})
	}
	return w
}

// Parse reads a whole document into memory.
func Parse(rd io.Reader, docURL string, opts Options) (*Feed, error) {
	r, err := NewReader(rd, docURL, opts)
	if err != nil {
		return nil, err
	}
	if _, err := r.Header(); err != nil {
		return nil, err
	}
	var entries []Entry
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		entries = append(entries, *e)
	}
	f := r.Feed()
	f.Entries = entries
	return &f, nil
}

// warn records a warning at the current token. once: a kind reported once
// per document (a bit in warned); 0 for every occurrence.
func (r *Reader) warn(once uint32, msg string) {
	if once != 0 {
		if r.warned&once != 0 {
			return
		}
		r.warned |= once
	}
	if len(r.feed.Warnings) >= r.opts.MaxWarnings {
		r.suppressed++
		return
	}
	r.feed.Warnings = append(r.feed.Warnings, Warning{URL: r.url, Line: r.line, Column: r.col, Msg: msg})
}

// Kinds of warnings reported once per document.
const (
	onceNoZone uint32 = 1 << iota
	onceHeadAfterEntries
	onceBadURL
	onceBadLength
	onceOtherEntry
	onceLinkNoHref
	onceContentAndLink
)

// errorHere is a ParseError at the decoder's position.
func (r *Reader) errorHere(msg string, cause error) *ParseError {
	line, col := r.pos()
	return &ParseError{URL: r.url, Line: line, Column: col, Msg: msg, Err: cause}
}

// errorAtToken is a ParseError at the start of the current token.
func (r *Reader) errorAtToken(msg string, cause error) *ParseError {
	return &ParseError{URL: r.url, Line: r.line, Column: r.col, Msg: msg, Err: cause}
}
