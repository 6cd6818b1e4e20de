package resourcesync

import (
	"bytes"
	"strings"
)

// findFrom returns the offset from pos of the first occurrence of delim at
// or after offset from, refilling as needed.
func (s *scanner) findFrom(from int, delim string) (int, error) {
	for {
		if i := bytes.Index(s.buf[s.pos+from:s.end], []byte(delim)); i >= 0 {
			return from + i, nil
		}
		from = max(from, s.end-s.pos-len(delim)+1)
		if !s.fill() {
			return 0, s.unexpectedEOF()
		}
	}
}

// skipPI skips a processing instruction. The XML declaration is checked: it
// must come first and declare UTF-8 (or its subset US-ASCII).
func (s *scanner) skipPI() error {
	k, err := s.findFrom(2, "?>")
	if err != nil {
		return err
	}
	body := s.buf[s.pos+2 : s.pos+k]
	target := body
	if i := bytes.IndexAny(body, " \t\r\n"); i >= 0 {
		target = body[:i]
	}
	if len(target) == 0 {
		return s.errHere("processing instruction without target")
	}
	if strings.EqualFold(string(target), "xml") {
		if s.tokOff != s.declOff {
			return s.errHere("XML declaration not at the start of the document")
		}
		if err := s.checkEncoding(body[len(target):]); err != nil {
			return err
		}
	}
	s.pos += k + 2
	return nil
}

// checkEncoding rejects an XML declaration naming an encoding other than
// UTF-8 or US-ASCII.
func (s *scanner) checkEncoding(decl []byte) error {
	i := bytes.Index(decl, []byte("encoding"))
	if i < 0 {
		return nil
	}
	rest := bytes.TrimLeft(decl[i+len("encoding"):], " \t\r\n")
	if len(rest) == 0 || rest[0] != '=' {
		return s.errHere("malformed XML declaration")
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	if len(rest) < 2 || (rest[0] != '"' && rest[0] != '\'') {
		return s.errHere("malformed XML declaration")
	}
	end := bytes.IndexByte(rest[1:], rest[0])
	if end < 0 {
		return s.errHere("malformed XML declaration")
	}
	switch strings.ToLower(string(rest[1 : 1+end])) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return nil
	}
	return s.errHere("unsupported encoding " + string(rest[1:1+end]))
}

// readBang reads a comment, a CDATA section or a document type declaration
// (the first kind is skipped, the second is text, the third is skipped).
func (s *scanner) readBang() (skipped bool, err error) {
	s.ensure(9)
	rest := s.buf[s.pos:s.end]
	switch {
	case bytes.HasPrefix(rest, []byte("<!--")):
		k, err := s.findFrom(4, "-->")
		if err != nil {
			return false, err
		}
		s.pos += k + 3
		return true, nil
	case bytes.HasPrefix(rest, []byte("<![CDATA[")):
		return false, s.readCDATA()
	case bytes.HasPrefix(rest, []byte("<!DOCTYPE")):
		return true, s.skipDoctype()
	}
	return false, s.errHere("unknown markup declaration")
}

func (s *scanner) readCDATA() error {
	if len(s.stackEnds) == 0 {
		return s.errHere("CDATA section outside the root element")
	}
	k, err := s.findFrom(9, "]]>")
	if err != nil {
		return err
	}
	s.text = s.text[:0]
	for _, c := range s.buf[s.pos+9 : s.pos+k] {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			return s.errHere("illegal control character in CDATA section")
		}
		s.text = append(s.text, c)
	}
	s.text = bytes.ReplaceAll(s.text, []byte("\r\n"), []byte("\n"))
	s.pos += k + 3
	s.kind = tokText
	return nil
}

// skipDoctype skips <!DOCTYPE ...>, including an internal subset. Entities
// declared there are not used: references to them are errors.
func (s *scanner) skipDoctype() error {
	if s.sawRoot {
		return s.errHere("DOCTYPE after the root element")
	}
	depth := 0
	var quote byte
	for k := 9; ; k++ {
		if s.pos+k >= s.end && !s.fill() {
			return s.unexpectedEOF()
		}
		c := s.buf[s.pos+k]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '[':
			depth++
		case c == ']':
			depth--
		case c == '>' && depth <= 0:
			s.pos += k + 1
			return nil
		}
	}
}
