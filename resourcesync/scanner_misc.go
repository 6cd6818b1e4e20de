package resourcesync

import (
	"bytes"
	"strings"
	"unicode/utf8"
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

// skipPI skips a processing instruction. Its target must be a name. The
// XML declaration is checked: it must come first, declare version 1.0 and
// UTF-8 (or its subset US-ASCII).
func (s *scanner) skipPI() error {
	k, err := s.findFrom(2, "?>")
	if err != nil {
		return err
	}
	body := s.buf[s.pos+2 : s.pos+k]
	n := 0
	for n < len(body) && nameByte[body[n]] {
		n++
	}
	if !isXMLName(body[:n]) {
		return s.errHere("processing instruction without a valid target")
	}
	target := body
	if i := bytes.IndexAny(body, " \t\r\n"); i >= 0 {
		target = body[:i]
	}
	if strings.EqualFold(string(target), "xml") || string(body[:n]) == "xml" {
		if s.tokOff != s.declOff {
			return s.errHere("XML declaration not at the start of the document")
		}
		if err := s.checkDeclaration(body[n:]); err != nil {
			return err
		}
	}
	s.pos += k + 2
	return nil
}

// checkDeclaration checks the version and encoding of an XML declaration,
// both as the specification reads them and as encoding/xml does.
func (s *scanner) checkDeclaration(decl []byte) error {
	if v, ok := pseudoAttr(decl, "version"); ok && v != "1.0" {
		return s.errHere("unsupported XML version " + v)
	}
	if enc, ok := pseudoAttr(decl, "encoding"); ok && !isUTF8Label(enc) {
		return s.errHere("unsupported encoding " + enc)
	}
	return s.checkEncoding(decl)
}

// pseudoAttr finds name="value" in an XML declaration the way encoding/xml
// does (its procInst): the first name= directly followed by a quote.
func pseudoAttr(decl []byte, name string) (string, bool) {
	key := []byte(name + "=")
	for i := 0; i < len(decl); {
		k := bytes.Index(decl[i:], key)
		if k < 0 || i+k+len(key) >= len(decl) {
			return "", false
		}
		i += k + len(key)
		if q := decl[i]; q == '"' || q == '\'' {
			end := bytes.IndexByte(decl[i+1:], q)
			if end < 0 {
				return "", false
			}
			return string(decl[i+1 : i+1+end]), true
		}
		i++
	}
	return "", false
}

func isUTF8Label(enc string) bool {
	switch strings.ToLower(enc) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return true
	}
	return false
}

// checkEncoding rejects an XML declaration whose first "encoding" names an
// encoding other than UTF-8 or US-ASCII.
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
	if enc := string(rest[1 : 1+end]); !isUTF8Label(enc) {
		return s.errHere("unsupported encoding " + enc)
	}
	return nil
}

// readBang reads a comment, a CDATA section or a document type declaration
// (the first kind is skipped, the second is text, the third is skipped).
func (s *scanner) readBang() (skipped bool, err error) {
	s.ensure(9)
	rest := s.buf[s.pos:s.end]
	switch {
	case bytes.HasPrefix(rest, []byte("<!--")):
		return true, s.skipComment()
	case bytes.HasPrefix(rest, []byte("<![CDATA[")):
		return false, s.readCDATA()
	case bytes.HasPrefix(rest, []byte("<!DOCTYPE")):
		return true, s.skipDoctype()
	}
	return false, s.errHere("unknown markup declaration")
}

// skipComment skips a comment, which must not hold "--" (XML 1.0 §2.5).
func (s *scanner) skipComment() error {
	k, err := s.findFrom(4, "--")
	if err != nil {
		return err
	}
	if !s.ensure(k+3) || s.buf[s.pos+k+2] != '>' {
		if s.end-s.pos < k+3 {
			return s.unexpectedEOF()
		}
		return s.errAt(s.base+int64(s.pos+k), "'--' in a comment")
	}
	s.pos += k + 3
	return nil
}

// readCDATA reads a CDATA section as text, checking its characters and
// normalising line ends.
func (s *scanner) readCDATA() error {
	if len(s.stackEnds) == 0 {
		return s.errHere("CDATA section outside the root element")
	}
	k, err := s.findFrom(9, "]]>")
	if err != nil {
		return err
	}
	s.text = s.ownText[:0]
	body := s.buf[s.pos+9 : s.pos+k]
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\r':
			s.text = append(s.text, '\n')
			if i++; i < len(body) && body[i] == '\n' {
				i++
			}
			continue
		case c < 0x20 && c != '\t' && c != '\n':
			return s.errAt(s.base+int64(s.pos+9+i), "illegal control character in CDATA section")
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(body[i:])
			if (r == utf8.RuneError && size == 1) || !isXMLChar(r) {
				return s.errAt(s.base+int64(s.pos+9+i), "invalid UTF-8 or illegal character in CDATA section")
			}
			s.text = append(s.text, body[i:i+size]...)
			i += size
			continue
		}
		s.text = append(s.text, c)
		i++
	}
	s.ownText = s.text
	s.pos += k + 3
	s.kind = tokText
	return nil
}

// skipDoctype skips <!DOCTYPE ...>. It finds the end as encoding/xml does:
// quoted strings and comments are skipped, and other '<' and '>' nest.
// Entities declared there are not used: references to them are errors.
func (s *scanner) skipDoctype() error {
	if s.sawRoot {
		return s.errHere("DOCTYPE after the root element")
	}
	k := len("<!D")
	next := func() (byte, bool) {
		if s.pos+k >= s.end && !s.fill() {
			return 0, false
		}
		k++
		return s.buf[s.pos+k-1], true
	}
	var quote byte
	depth := 0
	for {
		c, ok := next()
		if !ok {
			return s.unexpectedEOF()
		}
		if quote == 0 && c == '>' && depth == 0 {
			s.pos += k
			return nil
		}
		if !s.doctypeByte(c, &quote, &depth, next) {
			return s.unexpectedEOF()
		}
	}
}

// doctypeByte handles one byte of a document type declaration. A '<'
// starts a comment or nests; a byte read past it that is not part of
// "<!--" is handled in turn. It reports false at the end of the input.
func (s *scanner) doctypeByte(c byte, quote *byte, depth *int, next func() (byte, bool)) bool {
handle:
	for {
		switch {
		case c == *quote:
			*quote = 0
		case *quote != 0:
		case c == '"' || c == '\'':
			*quote = c
		case c == '>':
			*depth--
		case c == '<':
			for i := range 3 {
				var ok bool
				if c, ok = next(); !ok {
					return false
				}
				if c != "!--"[i] {
					*depth++
					continue handle
				}
			}
			var b0, b1 byte
			for {
				b, ok := next()
				if !ok {
					return false
				}
				if b0 == '-' && b1 == '-' && b == '>' {
					break
				}
				b0, b1 = b1, b
			}
		}
		return true
	}
}
