package atompmh

import (
	"fmt"
	"time"
)

// XML namespaces of Atom-PMH documents.
const (
	AtomNS    = "http://www.w3.org/2005/Atom"
	HistoryNS = "http://purl.org/syndication/history/1.0"
	xmlNS     = "http://www.w3.org/XML/1998/namespace"
)

// NoLength is Link.Length when the link has no length attribute.
const NoLength = -1

// Feed is one Atom Feed Document: its head (the feed metadata this package
// keeps) and, from Parse, its entries.
type Feed struct {
	URL     string    // the document's URL, as given to NewReader
	ID      string    // atom:id, as published
	Title   string    // atom:title, its text
	Updated time.Time // atom:updated in UTC; zero if absent or unreadable
	// Links of the head, resolved against xml:base and the document URL;
	// "" when absent.
	Self, Current, PrevArchive, NextArchive string
	Complete                                bool // fh:complete: this document is the whole pool
	Archive                                 bool // fh:archive: this is an archive document
	Entries                                 []Entry
	Warnings                                []Warning
}

// Kind is what an entry says about its record.
type Kind uint8

const (
	// KindOther is an entry the protocol does not define (no alternate link
	// and no empty content, or content with a src): the harvest skips it.
	KindOther Kind = iota
	// KindActive has one or more alternate links: the record's value at
	// Updated (active, or historical if the record has a newer entry).
	KindActive
	// KindDeletion has no alternate link and an empty atom:content without
	// src: the record was deleted at Updated.
	KindDeletion
)

func (k Kind) String() string {
	switch k {
	case KindActive:
		return "active"
	case KindDeletion:
		return "deletion"
	}
	return "other"
}

// Entry is one atom:entry.
type Entry struct {
	ID      string    // atom:id, as published (compared as a string)
	Updated time.Time // atom:updated in UTC
	Title   string    // atom:title, its text
	// Links are the alternate links (a link without rel is alternate), one
	// per representation, in document order.
	Links []Link
	// Related are the entry's other links (describedby, via, related, ...),
	// each with its Rel, in document order: what the record says about
	// itself beyond its representations.
	Related []Link
	// HasContent: the entry has an atom:content element; ContentEmpty: it
	// has no src, no child element and no text other than white space.
	HasContent, ContentEmpty bool
	Kind                     Kind
	Line                     int // line of the entry's start tag
}

// Link is one link of an entry: an alternate link (a representation of
// the record) or, in Entry.Related, another.
type Link struct {
	// Rel is the relation of a link in Entry.Related (a registered one
	// without the IANA prefix, else the URI); "" for an alternate link.
	Rel    string
	Href   string // resolved against xml:base and the document URL
	Type   string // the media type, as published; "" if absent
	Length int64  // the length attribute; NoLength if absent or unreadable
}

// Warning is a deviation that was read, not refused, or an entry that was
// skipped.
type Warning struct {
	URL          string
	Line, Column int
	Msg          string
}

func (w Warning) String() string {
	if w.Line == 0 {
		return w.URL + ": " + w.Msg
	}
	return fmt.Sprintf("%s:%d:%d: %s", w.URL, w.Line, w.Column, w.Msg)
}

// ParseError is a document that cannot be read, with its position.
type ParseError struct {
	URL          string
	Line, Column int
	Msg          string
	Err          error // the cause, for errors.Is
}

func (e *ParseError) Error() string {
	s := fmt.Sprintf("%s:%d:%d: %s", e.URL, e.Line, e.Column, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *ParseError) Unwrap() error { return e.Err }
