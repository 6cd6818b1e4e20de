package resourcesync

import (
	"fmt"
	"time"
)

// XML namespaces of Sitemap and ResourceSync documents.
const (
	SitemapNS = "http://www.sitemaps.org/schemas/sitemap/0.9"
	RSNS      = "http://www.openarchives.org/rs/terms/"
)

// Capability names a document's role, from its root <rs:md capability="...">.
type Capability string

// The capabilities of ResourceSync 1.1 and the 1.0 drafts.
const (
	CapDescription           Capability = "description"
	CapCapabilityList        Capability = "capabilitylist"
	CapResourceList          Capability = "resourcelist"
	CapResourceDump          Capability = "resourcedump"
	CapResourceDumpManifest  Capability = "resourcedump-manifest"
	CapChangeList            Capability = "changelist"
	CapChangeDump            Capability = "changedump"
	CapChangeDumpManifest    Capability = "changedump-manifest"
	CapFrameworkNotification Capability = "framework-notification"
	CapChangeNotification    Capability = "change-notification"
)

// Known reports whether c is one of the capabilities this package names.
func (c Capability) Known() bool {
	switch c {
	case CapDescription, CapCapabilityList, CapResourceList, CapResourceDump,
		CapResourceDumpManifest, CapChangeList, CapChangeDump, CapChangeDumpManifest,
		CapFrameworkNotification, CapChangeNotification:
		return true
	}
	return false
}

// RootKind is the document's root element.
type RootKind int

const (
	// URLSet is a <urlset>: its entries are resources (or, in a Source
	// Description or Capability List, other documents).
	URLSet RootKind = iota + 1
	// SitemapIndex is a <sitemapindex>: its entries are documents of the same
	// capability (an index, or a 1.0 archive).
	SitemapIndex
)

func (k RootKind) String() string {
	switch k {
	case URLSet:
		return "urlset"
	case SitemapIndex:
		return "sitemapindex"
	}
	return fmt.Sprintf("RootKind(%d)", int(k))
}

// Change is an entry's rs:md change attribute in a Change List or Change Dump
// Manifest.
type Change string

const (
	ChangeCreated Change = "created"
	ChangeUpdated Change = "updated"
	ChangeDeleted Change = "deleted"
)

// Hash is one value of a space-separated hash attribute, e.g. "md5:1584ab...".
type Hash struct {
	// Alg is the algorithm in lower case as published: "md5", "sha-1",
	// "sha-256", or an unknown one (kept).
	Alg string
	// Value is the digest as lower-case hex for md5, sha-1 and sha-256 (a
	// base64 or base64url value of the right length is converted, with a
	// warning); for an unknown algorithm, or a value that is neither hex nor
	// base64 of the right length, it is the value as published.
	Value string
}

func (h Hash) String() string { return h.Alg + ":" + h.Value }

// NoLength marks an absent length attribute.
const NoLength int64 = -1

// MD holds the attributes of an <rs:md> element. Absent times are zero;
// an absent length is NoLength.
type MD struct {
	Capability Capability
	At         time.Time
	Completed  time.Time
	From       time.Time
	Until      time.Time
	Modified   time.Time
	Datetime   time.Time
	Change     Change
	Hashes     []Hash
	Length     int64
	Type       string
	Path       string
	Encoding   string
}

// Link is an <rs:ln> element.
type Link struct {
	Rel      string
	Href     string // resolved against the document URL
	Pri      int    // 0 when absent
	Hashes   []Hash
	Length   int64 // NoLength when absent
	Modified time.Time
	Type     string
	Path     string
}

// Entry is a <url> (in a urlset) or <sitemap> (in a sitemapindex).
type Entry struct {
	Loc        string // resolved against the document URL
	Lastmod    time.Time
	ChangeFreq string
	MD         MD
	Links      []Link
}

// Header is what a document says about itself: its root element and the
// root-level rs:md and rs:ln elements.
type Header struct {
	URL   string // the document's own URL, as given to the reader
	Root  RootKind
	MD    MD
	Links []Link
}

// Capability returns the header's capability.
func (h *Header) Capability() Capability { return h.MD.Capability }

// Document is a whole document read into memory. Use Reader to stream large
// ones.
type Document struct {
	Header   Header
	Entries  []Entry
	Warnings []Warning
}

// Warning is a deviation from the standard that was tolerated. Each kind
// is reported once per document.
type Warning struct {
	URL  string
	Line int // 0: the document as a whole
	// Msg is the deviation, with what it was (a value, a name) when known.
	Msg string
	// Clause is the clause of the standard it departs from.
	Clause string
	// Reading is how it was read.
	Reading string
	// Count is how many times the document has it (so far, while it is
	// read; a loc listed twice is looked for in the first 50,000 entries):
	// the warning describes the first.
	Count int
}

// String is the warning on one line: where, the deviation, its clause and
// how it was read.
func (w Warning) String() string {
	s := fmt.Sprintf("%s:%d: %s", w.URL, w.Line, w.Msg)
	if w.Count > 1 {
		s += fmt.Sprintf(" (%d in the document)", w.Count)
	}
	return s + fmt.Sprintf(" [%s]; %s", w.Clause, w.Reading)
}

// ParseError is a document that could not be read. It names the document and
// the position.
type ParseError struct {
	URL    string
	Line   int
	Column int
	Msg    string
	Err    error // the underlying error, if any
}

func (e *ParseError) Error() string {
	s := fmt.Sprintf("%s:%d:%d: %s", e.URL, e.Line, e.Column, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *ParseError) Unwrap() error { return e.Err }
