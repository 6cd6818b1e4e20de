package resourcesync

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
)

// scanner is a small XML 1.0 tokenizer for the documents this package reads.
// It does not allocate per token: names and attribute values are slices into
// its buffers, valid until the next call to next. It checks well-formedness
// (tag nesting, attribute syntax, character and entity references, UTF-8,
// one root element) and knows only the five predefined entities, so nothing
// is ever expanded from a DTD. Namespaces are resolved by the caller.
type scanner struct {
	src    io.Reader
	buf    []byte
	pos    int   // next unread byte in buf
	end    int   // end of valid data in buf
	base   int64 // absolute offset of buf[0]
	srcErr error // sticky error from src; io.EOF at the end

	lines lineCounter

	kind       tokenKind
	tokOff     int64 // absolute offset of the current token's first byte
	prefix     []byte
	local      []byte
	attrs      []rawAttr
	nsAttrs    bool // attrs may hold namespace declarations
	spans      []attrSpan
	attrBuf    []byte
	text       []byte // the current text: ownText, or a slice of buf
	ownText    []byte // the buffer readText and readCDATA decode into
	pendingEnd bool   // the current start tag was <x/>; its end comes next
	stack      []byte
	stackEnds  []int
	sawRoot    bool
	rootClosed bool
	declOff    int64 // where an XML declaration may start (after a BOM or tolerated space)
	attrEnd    int   // while decoding an attribute value: the end of its text in buf
	mark       int64 // an earlier offset the caller may still report; noMark if none
	maxToken   int   // the longest token the buffer may grow to hold
}

// Structural limits: far beyond any ResourceSync document, and small
// enough that a hostile one cannot make the tag stack or the attribute
// checks (quadratic in the count) costly.
const (
	maxDepth      = 256
	maxAttributes = 256
)

type tokenKind uint8

const (
	tokStart tokenKind = iota + 1
	tokEnd
	tokText
	tokEOF
)

// rawAttr is an attribute of the current start tag, value decoded.
type rawAttr struct {
	prefix, local, value []byte
}

type attrSpan struct {
	prefixStart, prefixEnd, localStart, localEnd int // in the tag
	valueStart, valueEnd                         int // in attrBuf
}

// syntaxError is a well-formedness error at an absolute byte offset, or a
// structural limit passed (limit).
type syntaxError struct {
	off   int64
	msg   string
	limit bool
}

func (e *syntaxError) Error() string { return e.msg }

const initialBufSize = 64 << 10

func newScanner(src io.Reader, maxToken int) *scanner {
	return &scanner{src: src, buf: make([]byte, initialBufSize), lines: lineCounter{line: 1}, mark: noMark, maxToken: maxToken}
}

func (s *scanner) errAt(off int64, msg string) error { return &syntaxError{off: off, msg: msg} }

func (s *scanner) errHere(msg string) error { return s.errAt(s.base+int64(s.pos), msg) }

// depth is the number of open elements.
func (s *scanner) depth() int { return len(s.stackEnds) }

// fill reads more input, keeping buf[pos:]. It reports whether any bytes
// were added; at the end or on error srcErr is set.
func (s *scanner) fill() bool {
	if s.srcErr != nil {
		return false
	}
	if discard := s.discardable(); discard > 0 {
		s.lines.advance(s.buf[:discard], s.base)
		n := copy(s.buf, s.buf[discard:s.end])
		s.base += int64(discard)
		s.end, s.pos = n, s.pos-discard
	}
	if s.end == len(s.buf) {
		if len(s.buf) >= s.maxToken {
			// What must be kept (the current token) fills the buffer.
			s.srcErr = errTokenTooLarge
			return false
		}
		grown := make([]byte, min(2*len(s.buf), max(s.maxToken, initialBufSize)))
		copy(grown, s.buf[:s.end])
		s.buf = grown
	}
	for range 100 {
		n, err := s.src.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.srcErr = err
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
	s.srcErr = io.ErrNoProgress
	return false
}

// discardable is how many bytes at the start of buf fill may drop: those
// before pos, the current token and the mark, so that position stays exact
// for every offset an error may still name.
func (s *scanner) discardable() int {
	keep := min(s.tokOff, s.mark) - s.base
	if keep < int64(s.pos) {
		return int(max(keep, 0))
	}
	return s.pos
}

// noMark is the mark when no earlier offset must be kept.
const noMark = math.MaxInt64

// ensure makes n bytes available from pos, reporting false if the input ends
// first.
func (s *scanner) ensure(n int) bool {
	for s.end-s.pos < n {
		if !s.fill() {
			return false
		}
	}
	return true
}

// position returns the 1-based line and byte column of an absolute offset.
// Offsets already discarded from the buffer are reported as exactly as the
// line counter still allows.
func (s *scanner) position(off int64) (line, col int) {
	if off > s.base+int64(s.end) {
		off = s.base + int64(s.end)
	}
	if off > s.lines.counted {
		s.lines.advance(s.buf[s.lines.counted-s.base:off-s.base], s.lines.counted)
	}
	return s.lines.at(off)
}

// inputErr turns the source's error at the end of input into the error to
// report: nil for a clean end.
func (s *scanner) inputErr() error {
	if s.srcErr == nil || errors.Is(s.srcErr, io.EOF) {
		return nil
	}
	return s.srcErr
}

// next reads the next token. Comments, processing instructions and the
// document type declaration are skipped.
func (s *scanner) next() error {
	if s.pendingEnd {
		s.pendingEnd = false
		s.kind = tokEnd
		s.pop()
		return nil
	}
	for {
		s.tokOff = s.base + int64(s.pos)
		if s.pos >= s.end && !s.fill() {
			return s.atEOF()
		}
		if s.buf[s.pos] != '<' {
			if s.readTextFast() {
				return nil
			}
			return s.readText()
		}
		if !s.ensure(2) {
			return s.unexpectedEOF()
		}
		var skipped bool
		var err error
		switch s.buf[s.pos+1] {
		case '/':
			if s.readEndTagFast() {
				return nil
			}
			err = s.readEndTag()
		case '?':
			skipped, err = true, s.skipPI()
		case '!':
			skipped, err = s.readBang()
		default:
			if s.readStartTagFast() {
				return nil
			}
			err = s.readStartTag()
		}
		if err != nil || !skipped {
			return err
		}
	}
}

func (s *scanner) atEOF() error {
	if err := s.inputErr(); err != nil {
		return err
	}
	switch {
	case len(s.stackEnds) > 0:
		return s.unexpectedEOF()
	case !s.sawRoot:
		return s.errHere("no root element")
	}
	s.kind = tokEOF
	return nil
}

func (s *scanner) unexpectedEOF() error {
	if err := s.inputErr(); err != nil {
		return err
	}
	return s.errAt(s.base+int64(s.end), "unexpected end of input")
}

// canPush reports whether one more element may open.
func (s *scanner) canPush() bool { return len(s.stackEnds) < maxDepth }

func (s *scanner) depthError() error {
	return &syntaxError{off: s.base + int64(s.pos), msg: fmt.Sprintf("elements nested more than %d deep", maxDepth), limit: true}
}

func (s *scanner) push(qname []byte) {
	s.stack = append(s.stack, qname...)
	s.stackEnds = append(s.stackEnds, len(s.stack))
}

func (s *scanner) pop() {
	n := len(s.stackEnds) - 1
	s.stackEnds = s.stackEnds[:n]
	if n == 0 {
		s.stack = s.stack[:0]
		s.rootClosed = true
		return
	}
	s.stack = s.stack[:s.stackEnds[n-1]]
}

// top is the qualified name of the innermost open element.
func (s *scanner) top() []byte {
	n := len(s.stackEnds)
	start := 0
	if n > 1 {
		start = s.stackEnds[n-2]
	}
	return s.stack[start:s.stackEnds[n-1]]
}

// lineCounter counts newlines in consumed input once, in order.
type lineCounter struct {
	counted   int64 // absolute offset up to which newlines are counted
	line      int   // line number at counted
	lineStart int64 // absolute offset of the first byte of that line
}

func (l *lineCounter) advance(b []byte, off int64) {
	if off+int64(len(b)) <= l.counted {
		return
	}
	if off < l.counted {
		b = b[l.counted-off:]
		off = l.counted
	}
	if n := bytes.Count(b, []byte{'\n'}); n > 0 {
		l.line += n
		l.lineStart = off + int64(bytes.LastIndexByte(b, '\n')) + 1
	}
	l.counted = off + int64(len(b))
}

func (l *lineCounter) at(off int64) (line, col int) {
	if off < l.lineStart {
		return l.line, 1
	}
	return l.line, int(off-l.lineStart) + 1
}
