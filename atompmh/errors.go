package atompmh

import (
	"errors"
	"io"
)

// Causes a ParseError wraps (its Err), for errors.Is.
var (
	// ErrNotXML: not well-formed XML, an encoding other than UTF-8 or
	// US-ASCII, or a document type declaration (refused: no entity is ever
	// expanded).
	ErrNotXML = errors.New("not well-formed XML")
	// ErrNamespace: the root element is feed outside the Atom namespace.
	ErrNamespace = errors.New("wrong or missing namespace")
	// ErrStructure: not an Atom Feed Document (another root element).
	ErrStructure = errors.New("not an Atom feed document")
	// ErrTooLarge: the decompressed document exceeds Options.MaxBytes, a
	// single token exceeds Options.MaxTokenBytes, or elements nest deeper
	// than Options.MaxDepth.
	ErrTooLarge = errors.New("document too large")
	// ErrTooManyEntries: more than Options.MaxEntries entries.
	ErrTooManyEntries = errors.New("too many entries")
)

// errTokenTooLarge is the cause inside the byte counter; it is reported as
// ErrTooLarge.
var errTokenTooLarge = errors.New("token too large")

// counter is the io.ByteReader the XML decoder reads from. It bounds the
// document (max bytes in all) and each token (maxToken bytes since the
// last token boundary the reader marked), so an endless attribute or text
// fails as soon as it crosses the limit instead of after it was buffered.
type counter struct {
	r        io.ByteReader
	n        int64 // bytes delivered
	max      int64
	tokStart int64 // n at the last token boundary
	maxToken int64
}

func (c *counter) ReadByte() (byte, error) {
	if c.n >= c.max {
		if _, err := c.r.ReadByte(); err != nil {
			return 0, err
		}
		return 0, ErrTooLarge
	}
	if c.n-c.tokStart >= c.maxToken {
		return 0, errTokenTooLarge
	}
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

// Read is there for io.Reader; the decoder uses ReadByte.
func (c *counter) Read(p []byte) (int, error) {
	for i := range p {
		b, err := c.ReadByte()
		if err != nil {
			return i, err
		}
		p[i] = b
	}
	return len(p), nil
}
