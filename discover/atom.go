package discover

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"

	"github.com/klauspost/compress/gzip"

	"rsfs/source"
)

// atomNS is the Atom namespace (RFC 4287), whose feed root marks an Atom
// feed; package atompmh reads it.
const atomNS = "http://www.w3.org/2005/Atom"

// sniffPeek bounds how much of a gzip stream's start is decompressed to
// look at: as much as discovery peeks at (source.Other).
const sniffPeek = 4096

var gzipMagic = []byte{0x1f, 0x8b}

// atom is the Atom feed, as discovery's other protocol (source.Other).
type atom struct{}

// Is reports whether the document's first element is an Atom feed,
// looking through gzip (package atompmh reads a gzip stream too).
func (atom) Is(head []byte) bool {
	dec := xml.NewDecoder(bytes.NewReader(xmlHead(head)))
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

// xmlHead is the start of a body as XML: head itself, or, when it is the
// start of a gzip stream, what it decompresses to (as much as it does).
func xmlHead(head []byte) []byte {
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

// Link is the first <link rel="alternate" type="application/atom+xml">.
func (atom) Link(links []source.PageLink) string {
	for _, l := range links {
		if l.HasRel("alternate") && isAtomType(l.Type) {
			return l.Href
		}
	}
	return ""
}

func isAtomType(typ string) bool {
	typ, _, _ = strings.Cut(typ, ";")
	return strings.EqualFold(strings.TrimSpace(typ), "application/atom+xml")
}
