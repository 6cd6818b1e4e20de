package resourcesync

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// textSpecial marks the bytes the text and attribute loops must look at:
// markup, references, carriage returns, control characters and non-ASCII.
var textSpecial = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = c != '\t' && c != '\n'
	}
	t['\r'] = true
	t['<'] = true
	t['&'] = true
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	return t
}()

// charDataSpecial adds '>' to textSpecial, so that readText can reject a
// literal "]]>" in character data (XML 1.0 §2.4).
var charDataSpecial = func() (t [256]bool) {
	t = textSpecial
	t['>'] = true
	return t
}()

// readText reads character data up to the next '<' or the end of input into
// s.text, decoding references and normalising line ends.
func (s *scanner) readText() error {
	s.text = s.ownText[:0]
	brackets := 0 // literal ']' bytes just before pos
	for {
		i := s.pos
		for i+8 <= s.end && plainTextWord(word(s.buf, i)) {
			i += 8
		}
		for i < s.end && !charDataSpecial[s.buf[i]] {
			i++
		}
		brackets = trailingBrackets(s.buf[s.pos:i], brackets)
		s.text = append(s.text, s.buf[s.pos:i]...)
		s.pos = i
		if s.pos >= s.end {
			if !s.fill() {
				break
			}
			continue
		}
		c := s.buf[s.pos]
		if c == '<' {
			break
		}
		if c == '>' {
			if brackets >= 2 {
				return s.errAt(s.base+int64(s.pos-2), "']]>' in character data")
			}
			s.text = append(s.text, '>')
			s.pos++
			brackets = 0
			continue
		}
		var err error
		s.text, err = s.special(s.text, false)
		if err != nil {
			return err
		}
		brackets = 0
	}
	s.ownText = s.text
	if len(s.stackEnds) == 0 && !isSpace(s.text) {
		return s.errAt(s.tokOff, "text outside the root element")
	}
	s.kind = tokText
	return nil
}

// trailingBrackets returns the number of literal ']' bytes ending a run
// that follows prev of them.
func trailingBrackets(b []byte, prev int) int {
	n := 0
	for n < len(b) && b[len(b)-1-n] == ']' {
		n++
	}
	if n == len(b) {
		return prev + n
	}
	return n
}

// special decodes the special byte at pos (a reference, a carriage return,
// a control character or a multi-byte character), appending to dst. In an
// attribute value, whitespace characters become spaces.
func (s *scanner) special(dst []byte, inAttr bool) ([]byte, error) {
	c := s.buf[s.pos]
	switch {
	case c == '&':
		return s.reference(dst, s.attrEnd)
	case c == '\r':
		s.pos++
		if (inAttr || s.ensure(1)) && s.pos < s.end && s.buf[s.pos] == '\n' {
			s.pos++
		}
		if inAttr {
			return append(dst, ' '), nil
		}
		return append(dst, '\n'), nil
	case c < 0x20:
		return dst, s.errHere("illegal control character")
	case c == '<':
		return dst, s.errHere("'<' in attribute value")
	}
	if !inAttr {
		s.ensure(utf8.UTFMax) // an attribute's tag is already buffered whole
	}
	r, size := utf8.DecodeRune(s.buf[s.pos:s.end])
	if (r == utf8.RuneError && size == 1) || !isXMLChar(r) {
		return dst, s.errHere("invalid UTF-8 or illegal character")
	}
	dst = append(dst, s.buf[s.pos:s.pos+size]...)
	s.pos += size
	return dst, nil
}

// reference decodes a character or predefined entity reference at pos. In
// an attribute value (attrEnd > 0) the reference must end before attrEnd;
// elsewhere the buffer is refilled as needed. Character references may have
// any number of digits, as encoding/xml allows.
func (s *scanner) reference(dst []byte, limit int) ([]byte, error) {
	k := 1
	for {
		if s.pos+k >= s.end || (limit > 0 && s.pos+k >= limit) {
			if limit > 0 || !s.fill() {
				return dst, s.errHere("unterminated or unknown reference")
			}
			continue
		}
		c := s.buf[s.pos+k]
		if c == ';' {
			break
		}
		if !nameByte[c] && c != '#' {
			return dst, s.errHere("unterminated or unknown reference")
		}
		k++
	}
	name := s.buf[s.pos+1 : s.pos+k]
	var r rune
	switch string(name) {
	case "lt":
		r = '<'
	case "gt":
		r = '>'
	case "amp":
		r = '&'
	case "apos":
		r = '\''
	case "quot":
		r = '"'
	default:
		var ok bool
		if r, ok = charRef(name); !ok {
			return dst, s.errHere("unknown entity or bad character reference")
		}
		if r >= 0xD800 && r <= 0xDFFF {
			return dst, s.errHere("character reference to a surrogate")
		}
		if !isXMLChar(r) {
			return dst, s.errHere("character reference to an illegal character")
		}
	}
	s.pos += k + 1
	return utf8.AppendRune(dst, r), nil
}

// charRef decodes "#123" or "#x7B" (any number of leading zeros) to a value
// no larger than utf8.MaxRune.
func charRef(name []byte) (rune, bool) {
	if len(name) < 2 || name[0] != '#' {
		return 0, false
	}
	digits, base := name[1:], rune(10)
	if digits[0] == 'x' {
		digits, base = digits[1:], 16
	}
	if len(digits) == 0 {
		return 0, false
	}
	var r rune
	for _, c := range digits {
		d := hexDigit(c)
		if d < 0 || rune(d) >= base {
			return 0, false
		}
		if r = r*base + rune(d); r > utf8.MaxRune {
			return 0, false
		}
	}
	return r, true
}

func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func isXMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		(r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) ||
		(r >= 0x10000 && r <= 0x10FFFF)
}

func isSpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\n' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// tagSpecial marks the bytes findTagEnd stops at outside quotes.
var tagSpecial = func() (t [256]bool) {
	for _, c := range "\"'<>" {
		t[c] = true
	}
	return t
}()

// findTagEnd returns the offset from pos of the '>' closing the tag at pos,
// skipping quoted attribute values when quoted is set.
func (s *scanner) findTagEnd(quoted bool) (int, error) {
	k := 1
	for {
		for s.pos+k+8 <= s.end && plainTagWord(word(s.buf, s.pos+k)) {
			k += 8
		}
		for s.pos+k < s.end && !tagSpecial[s.buf[s.pos+k]] {
			k++
		}
		if s.pos+k >= s.end {
			if !s.fill() {
				return 0, s.unexpectedEOF()
			}
			continue
		}
		switch c := s.buf[s.pos+k]; {
		case c == '>':
			return k, nil
		case c == '<':
			return 0, s.errAt(s.base+int64(s.pos+k), "'<' inside a tag")
		case quoted:
			var err error
			if k, err = s.skipQuoted(k); err != nil {
				return 0, err
			}
		}
		k++
	}
}

// skipQuoted returns the offset of the quote closing the one at offset k.
func (s *scanner) skipQuoted(k int) (int, error) {
	quote := s.buf[s.pos+k]
	from := k + 1
	for {
		if i := bytes.IndexByte(s.buf[s.pos+from:s.end], quote); i >= 0 {
			return from + i, nil
		}
		from = s.end - s.pos
		if !s.fill() {
			return 0, s.unexpectedEOF()
		}
	}
}

// readStartTag reads <name attr="value" ...> or <name .../>.
func (s *scanner) readStartTag() error {
	k, err := s.findTagEnd(true)
	if err != nil {
		return err
	}
	if s.rootClosed {
		return s.errHere("more than one root element")
	}
	tagStart := s.pos + 1
	tag := s.buf[tagStart : s.pos+k]
	selfClosing := len(tag) > 0 && tag[len(tag)-1] == '/'
	if selfClosing {
		tag = tag[:len(tag)-1]
	}
	n, err := s.name(tag, 0, tagStart)
	if err != nil {
		return err
	}
	s.prefix, s.local = splitQName(tag[:n])
	if err := s.readAttrs(tag, n, tagStart); err != nil {
		return err
	}
	if !s.canPush() {
		return s.depthError()
	}
	s.push(tag[:n])
	s.sawRoot = true
	s.pos += k + 1
	s.kind = tokStart
	s.pendingEnd = selfClosing
	return nil
}

// name scans an XML name in tag from i, returning its end.
func (s *scanner) name(tag []byte, i, tagStart int) (int, error) {
	start, colons, nonASCII := i, 0, false
	for i < len(tag) && nameByte[tag[i]] {
		switch {
		case tag[i] == ':':
			colons++
		case tag[i] >= utf8.RuneSelf:
			nonASCII = true
		}
		i++
	}
	q := tag[start:i]
	if i == start || !isNameStart(tag[start]) || (nonASCII && !isXMLName(q)) {
		return 0, s.errAt(s.base+int64(tagStart+start), "invalid name")
	}
	if colons > 1 || (colons == 1 && (q[0] == ':' || q[len(q)-1] == ':')) {
		return 0, s.errAt(s.base+int64(tagStart+start), "invalid qualified name")
	}
	return i, nil
}

func isNameByte(c byte) bool { return nameByte[c] }

// nameByte marks the bytes of XML names (all non-ASCII bytes are accepted).
var nameByte = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c >= 0x80 || c == '-' || c == '.' || c == '_' || c == ':' ||
			(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
	}
	return t
}()

func isNameStart(c byte) bool {
	return isNameByte(c) && c != '-' && c != '.' && (c < '0' || c > '9')
}

func splitQName(q []byte) (prefix, local []byte) {
	if c := bytes.IndexByte(q, ':'); c >= 0 {
		return q[:c], q[c+1:]
	}
	return nil, q
}

// readAttrs parses the attributes of tag from i into s.attrs.
func (s *scanner) readAttrs(tag []byte, i, tagStart int) error {
	s.spans = s.spans[:0]
	s.attrBuf = s.attrBuf[:0]
	for {
		j := skipSpace(tag, i)
		if j == len(tag) {
			break
		}
		if j == i {
			return s.errAt(s.base+int64(tagStart+j), "missing space before attribute")
		}
		if err := s.attr(tag, j, tagStart, &i); err != nil {
			return err
		}
	}
	s.attrs = s.attrs[:0]
	s.nsAttrs = len(s.spans) > 0
	for _, sp := range s.spans {
		s.attrs = append(s.attrs, rawAttr{
			prefix: tag[sp.prefixStart:sp.prefixEnd],
			local:  tag[sp.localStart:sp.localEnd],
			value:  s.attrBuf[sp.valueStart:sp.valueEnd],
		})
	}
	return nil
}

// attr parses one name="value" at j, setting *next past it.
func (s *scanner) attr(tag []byte, j, tagStart int, next *int) error {
	n, err := s.name(tag, j, tagStart)
	if err != nil {
		return err
	}
	sp := attrSpan{prefixStart: j, prefixEnd: j, localStart: j, localEnd: n}
	if c := bytes.IndexByte(tag[j:n], ':'); c >= 0 {
		sp.prefixEnd, sp.localStart = j+c, j+c+1
	}
	if len(s.spans) >= maxAttributes {
		return &syntaxError{off: s.base + int64(tagStart+j), msg: fmt.Sprintf("more than %d attributes on one element", maxAttributes), limit: true}
	}
	for _, o := range s.spans {
		if bytes.Equal(tag[o.prefixStart:o.localEnd], tag[j:n]) {
			return s.errAt(s.base+int64(tagStart+j), "duplicate attribute")
		}
	}
	k := skipSpace(tag, n)
	if k == len(tag) || tag[k] != '=' {
		return s.errAt(s.base+int64(tagStart+k), "attribute without value")
	}
	k = skipSpace(tag, k+1)
	if k == len(tag) || (tag[k] != '"' && tag[k] != '\'') {
		return s.errAt(s.base+int64(tagStart+k), "unquoted attribute value")
	}
	closeAt := bytes.IndexByte(tag[k+1:], tag[k])
	if closeAt < 0 {
		return s.errAt(s.base+int64(tagStart+k), "unterminated attribute value")
	}
	sp.valueStart = len(s.attrBuf)
	if err := s.attrValue(tagStart+k+1, tagStart+k+1+closeAt); err != nil {
		return err
	}
	sp.valueEnd = len(s.attrBuf)
	s.spans = append(s.spans, sp)
	*next = k + 2 + closeAt
	return nil
}

// attrValue decodes buf[from:to] into attrBuf. The whole tag is buffered, so
// the reference and rune decoders never need to refill here.
func (s *scanner) attrValue(from, to int) error {
	saved := s.pos
	defer func() { s.pos, s.attrEnd = saved, 0 }()
	s.pos, s.attrEnd = from, to
	for {
		i := s.pos
		for i+8 <= to && plainAttrWord(word(s.buf, i)) {
			i += 8
		}
		for i < to && !textSpecial[s.buf[i]] && s.buf[i] != '\t' && s.buf[i] != '\n' {
			i++
		}
		s.attrBuf = append(s.attrBuf, s.buf[s.pos:i]...)
		s.pos = i
		if s.pos >= to {
			return nil
		}
		var err error
		switch c := s.buf[s.pos]; {
		case c == '\t' || c == '\n':
			s.attrBuf = append(s.attrBuf, ' ')
			s.pos++
		default:
			s.attrBuf, err = s.special(s.attrBuf, true)
		}
		if err != nil {
			return err
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// readEndTag reads </name>.
func (s *scanner) readEndTag() error {
	k, err := s.findTagEnd(false)
	if err != nil {
		return err
	}
	tag := s.buf[s.pos+2 : s.pos+k]
	n := len(tag)
	for n > 0 && (tag[n-1] == ' ' || tag[n-1] == '\n' || tag[n-1] == '\t' || tag[n-1] == '\r') {
		n--
	}
	if len(s.stackEnds) == 0 {
		return s.errHere("end tag without start tag")
	}
	if !bytes.Equal(tag[:n], s.top()) {
		return s.errHere("end tag does not match start tag <" + string(s.top()) + ">")
	}
	s.prefix, s.local = splitQName(tag[:n])
	s.pop()
	s.pos += k + 1
	s.kind = tokEnd
	return nil
}
