package resourcesync

import "bytes"

// Fast paths for the tokens that make up almost all of a large list: start
// tags with ASCII names and attribute values that need no decoding, end
// tags, and text without references, all lying wholly in the buffer. Each
// either reads the whole token exactly as the general code would, or
// returns false having changed nothing; the general code then reads the
// token, refilling the buffer and reporting any error. None of them ever
// reports an error itself, so error messages and positions come from one
// place.

// plainNameByte marks the ASCII bytes of XML names other than ':'.
var plainNameByte = func() (t [256]bool) {
	for c := range 0x80 {
		t[c] = nameByte[c] && c != ':'
	}
	return t
}()

// plainAttrByte marks the bytes attrValue copies as they are.
var plainAttrByte = func() (t [256]bool) {
	for c := range 256 {
		t[c] = !textSpecial[c] && c != '\t' && c != '\n'
	}
	return t
}()

// plainName scans an ASCII name with at most one colon, neither first nor
// last, from i in b. It returns the name's end and the colon's offset (-1
// if none), or ok false for any other name or if b ends within it.
func plainName(b []byte, i int) (end, colon int, ok bool) {
	if i >= len(b) || !isPlainNameStart(b[i]) {
		return 0, 0, false
	}
	start := i
	colon = -1
	for {
		i++
		for i < len(b) && plainNameByte[b[i]] {
			i++
		}
		if i >= len(b) {
			return 0, 0, false
		}
		if b[i] != ':' {
			break
		}
		if colon >= 0 || i+1 >= len(b) || !isPlainNameStart(b[i+1]) {
			return 0, 0, false // a second colon or one ending the name
		}
		colon = i - start
	}
	if b[i] >= 0x80 {
		return 0, 0, false
	}
	return i, colon, true
}

func isPlainNameStart(c byte) bool {
	return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

// readStartTagFast reads a start tag at pos made of plain names, single
// spaces or other whitespace, and attribute values without references,
// control characters or non-ASCII bytes.
func (s *scanner) readStartTagFast() bool {
	if s.rootClosed {
		return false
	}
	b := s.buf[:s.end]
	nameStart := s.pos + 1
	i, colon, ok := plainName(b, nameStart)
	if !ok {
		return false
	}
	qname := b[nameStart:i]
	s.attrs = s.attrs[:0]
	s.nsAttrs = false
	selfClosing := false
	for {
		if i >= len(b) {
			return false
		}
		c := b[i]
		if c == '>' {
			i++
			break
		}
		if c == '/' {
			if i+1 >= len(b) || b[i+1] != '>' {
				return false
			}
			selfClosing = true
			i += 2
			break
		}
		if !isSpaceByte(c) {
			return false
		}
		for i < len(b) && isSpaceByte(b[i]) {
			i++
		}
		if i < len(b) && (b[i] == '>' || b[i] == '/') {
			continue
		}
		if i, ok = s.plainAttr(b, i); !ok {
			return false
		}
	}
	s.prefix, s.local = nil, qname
	if colon >= 0 {
		s.prefix, s.local = qname[:colon], qname[colon+1:]
	}
	if !s.canPush() {
		return false // the general path reports it
	}
	s.push(qname)
	s.sawRoot = true
	s.pos = i
	s.kind = tokStart
	s.pendingEnd = selfClosing
	return true
}

// plainAttr reads name="value" at i in b into attrs, returning the offset
// after the closing quote.
func (s *scanner) plainAttr(b []byte, i int) (int, bool) {
	nameStart := i
	i, colon, ok := plainName(b, i)
	if !ok || i+1 >= len(b) || b[i] != '=' || (b[i+1] != '"' && b[i+1] != '\'') {
		return 0, false
	}
	a := rawAttr{local: b[nameStart:i]}
	if colon >= 0 {
		a.prefix, a.local = a.local[:colon], a.local[colon+1:]
	}
	if len(s.attrs) >= maxAttributes {
		return 0, false // the general path reports it
	}
	for _, o := range s.attrs {
		if string(o.local) == string(a.local) && string(o.prefix) == string(a.prefix) {
			return 0, false // duplicate: the general path reports it
		}
	}
	quote := b[i+1]
	valueStart := i + 2
	j := valueStart
	for j+8 <= len(b) {
		k := attrStop(word(b, j), quote)
		j += k
		if k < 8 {
			break
		}
	}
	for j < len(b) && plainAttrByte[b[j]] && b[j] != quote {
		j++
	}
	if j >= len(b) || b[j] != quote {
		return 0, false
	}
	a.value = b[valueStart:j]
	s.attrs = append(s.attrs, a)
	if string(a.prefix) == "xmlns" || (len(a.prefix) == 0 && string(a.local) == "xmlns") {
		s.nsAttrs = true
	}
	return j + 1, true
}

// readEndTagFast reads </name> at pos when name is the open element's.
func (s *scanner) readEndTagFast() bool {
	if len(s.stackEnds) == 0 {
		return false
	}
	top := s.top()
	nameStart := s.pos + 2
	nameEnd := nameStart + len(top)
	if nameEnd >= s.end || s.buf[nameEnd] != '>' || !bytes.Equal(s.buf[nameStart:nameEnd], top) {
		return false
	}
	s.prefix, s.local = splitQName(s.buf[nameStart:nameEnd])
	s.pop()
	s.pos = nameEnd + 1
	s.kind = tokEnd
	return true
}

// plainTextEnd returns the end of the text at pos if it holds only bytes
// copied as they are and is followed by '<' in the buffer, or -1.
func (s *scanner) plainTextEnd() int {
	i := s.pos
	for i+8 <= s.end {
		k := textStop(word(s.buf, i))
		i += k
		if k < 8 {
			break
		}
	}
	for i < s.end && !charDataSpecial[s.buf[i]] {
		i++
	}
	if i >= s.end || s.buf[i] != '<' {
		return -1
	}
	return i
}

// readTextFast reads plain text at pos without copying it.
func (s *scanner) readTextFast() bool {
	end := s.plainTextEnd()
	if end < 0 {
		return false
	}
	text := s.buf[s.pos:end]
	if len(s.stackEnds) == 0 && !isSpace(text) {
		return false // the general path reports it
	}
	s.text = text
	s.pos = end
	s.kind = tokText
	return true
}

// elementTextFast reads the plain text and end tag that follow the start
// tag just read, returning the text (valid until the next read) and false
// if they are not both plain and buffered; nothing is consumed then.
func (s *scanner) elementTextFast() ([]byte, bool) {
	if s.pendingEnd || s.kind != tokStart {
		return nil, false
	}
	end := s.plainTextEnd()
	if end < 0 || end+1 >= s.end || s.buf[end+1] != '/' {
		return nil, false
	}
	textStart, tokOff := s.pos, s.tokOff
	s.pos = end
	s.tokOff = s.base + int64(end)
	if !s.readEndTagFast() {
		s.pos, s.tokOff = textStart, tokOff
		return nil, false
	}
	return s.buf[textStart:end], true
}

// skipPlainText skips plain text inside an element for a caller that
// ignores text, so that the next call to next reads the tag after it.
// Text that is not plain is left for next to read and check.
func (s *scanner) skipPlainText() {
	if s.pendingEnd || len(s.stackEnds) == 0 || s.pos >= s.end || s.buf[s.pos] == '<' {
		return
	}
	if end := s.plainTextEnd(); end >= 0 {
		s.pos = end
	}
}
