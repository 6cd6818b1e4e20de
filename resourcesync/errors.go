package resourcesync

import (
	"errors"
	"io"
)

// Causes a ParseError wraps (its Err), for errors.Is.
var (
	// ErrNotXML: the document is not well-formed XML.
	ErrNotXML = errors.New("not well-formed XML")
	// ErrNamespace: the root or an rs element is missing its namespace or has the wrong one.
	ErrNamespace = errors.New("wrong or missing namespace")
	// ErrStructure: the elements are not a Sitemap document (e.g. an entry without <loc>).
	ErrStructure = errors.New("not a Sitemap document")
	// ErrValue: a number, datetime or hash that cannot be read.
	ErrValue = errors.New("bad value")
	// ErrTooLarge: the decompressed document exceeds Options.MaxBytes, or
	// one of its tokens Options.MaxTokenBytes, or it nests elements or
	// repeats attributes beyond what any ResourceSync document needs.
	ErrTooLarge = errors.New("document too large")
	// ErrTooManyEntries: the document has more than Options.MaxEntries entries.
	ErrTooManyEntries = errors.New("too many entries")
)

// errTokenTooLarge: one token is longer than Options.MaxTokenBytes.
var errTokenTooLarge = errors.New("token too large")

// limitReader passes through at most max bytes and fails with ErrTooLarge
// if the input holds more.
type limitReader struct {
	r         io.Reader
	remaining int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.remaining <= 0 {
		var probe [1]byte
		n, err := l.r.Read(probe[:])
		if n > 0 {
			return 0, ErrTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > l.remaining {
		p = p[:l.remaining]
	}
	n, err := l.r.Read(p)
	l.remaining -= int64(n)
	return n, err
}
