package atompmh

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// readHeader reads the root start tag and the head up to the first entry.
func (r *Reader) readHeader() error {
	if err := r.readRoot(); err != nil {
		return err
	}
	for {
		tok, err := r.token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if isAtom(t.Name, "entry") {
				r.pending = true
				return nil
			}
			if err := r.headElement(t); err != nil {
				return err
			}
		case xml.EndElement: // a feed without entries
			if err := r.finish(); !errors.Is(err, io.EOF) {
				return err
			}
			r.done = true
			return nil
		}
	}
}

// readRoot reads up to the root start tag and checks it is atom:feed.
func (r *Reader) readRoot() error {
	for {
		tok, err := r.token()
		if errors.Is(err, io.EOF) {
			return r.errorHere("no root element", ErrNotXML)
		}
		if err != nil {
			return err
		}
		t, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch {
		case isAtom(t.Name, "feed"):
			return nil
		case isAtom(t.Name, "entry"):
			return r.errorAtToken("an Atom Entry Document, not a feed", ErrStructure)
		case t.Name.Local == "feed":
			return r.errorAtToken(fmt.Sprintf("root element feed in namespace %q, not %q", t.Name.Space, AtomNS), ErrNamespace)
		}
		return r.errorAtToken(fmt.Sprintf("root element %s, not atom:feed", t.Name.Local), ErrStructure)
	}
}

func isAtom(n xml.Name, local string) bool { return n.Space == AtomNS && n.Local == local }

// headElement reads one child of feed other than an entry.
func (r *Reader) headElement(t xml.StartElement) error {
	switch {
	case isAtom(t.Name, "id"):
		return r.textInto(&r.feed.ID)
	case isAtom(t.Name, "title"):
		return r.textInto(&r.feed.Title)
	case isAtom(t.Name, "updated"):
		s, err := r.text()
		if err != nil {
			return err
		}
		r.feed.Updated = r.readTime(s, "feed")
		return nil
	case isAtom(t.Name, "link"):
		r.headLink(t.Attr)
	case t.Name.Space == HistoryNS && t.Name.Local == "complete":
		r.feed.Complete = true
	case t.Name.Space == HistoryNS && t.Name.Local == "archive":
		r.feed.Archive = true
	}
	return r.skip()
}

func (r *Reader) textInto(dst *string) error {
	s, err := r.text()
	*dst = s
	return err
}

// readTime reads a datetime, warning about a missing zone; an unreadable
// one is warned about and zero.
func (r *Reader) readTime(s, what string) time.Time {
	t, err := ParseTime(s)
	switch {
	case errors.Is(err, errNoZone):
		r.warn(onceNoZone, err.Error())
	case err != nil:
		r.warn(0, what+" atom:updated: "+err.Error())
	}
	return t
}

// headLink keeps the head's self, current, prev-archive and next-archive.
func (r *Reader) headLink(attrs []xml.Attr) {
	var dst *string
	switch linkRel(attrs) {
	case "self":
		dst = &r.feed.Self
	case "current":
		dst = &r.feed.Current
	case "prev-archive":
		dst = &r.feed.PrevArchive
	case "next-archive":
		dst = &r.feed.NextArchive
	default:
		return
	}
	href, ok := attr(attrs, "href")
	if !ok {
		r.warn(onceLinkNoHref, "link without href; ignored")
		return
	}
	*dst = r.resolve(href)
}

// nextEntry reads to the next entry and returns it, skipping entries that
// cannot be kept.
func (r *Reader) nextEntry() (*Entry, error) {
	for {
		if !r.pending {
			if err := r.toNextEntry(); err != nil {
				return nil, err
			}
		}
		r.pending = false
		r.entries++
		if r.entries > r.opts.MaxEntries {
			return nil, r.errorAtToken(fmt.Sprintf("more than %d entries", r.opts.MaxEntries), ErrTooManyEntries)
		}
		e, keep, err := r.readEntry()
		if err != nil {
			return nil, err
		}
		if keep {
			return e, nil
		}
	}
}

// toNextEntry reads to the next entry's start tag (r.pending), or to the
// end of the document (io.EOF). Head elements met on the way are applied.
func (r *Reader) toNextEntry() error {
	for {
		if r.rootClosed {
			return r.finish()
		}
		tok, err := r.token()
		if err != nil {
			return err
		}
		t, ok := tok.(xml.StartElement)
		if !ok || r.depth != 2 {
			continue
		}
		if isAtom(t.Name, "entry") {
			r.pending = true
			return nil
		}
		if t.Name.Space == AtomNS || t.Name.Space == HistoryNS {
			r.warn(onceHeadAfterEntries, "feed metadata after the first entry ("+t.Name.Local+"); applied")
		}
		if err := r.headElement(t); err != nil {
			return err
		}
	}
}

// finish reads what follows the root element: only comments, processing
// instructions and white space may. It returns io.EOF at the end.
func (r *Reader) finish() error {
	for {
		if _, err := r.token(); err != nil {
			return err
		}
	}
}

// readEntry reads the entry whose start tag was just read. keep is false
// for an entry skipped with a warning.
func (r *Reader) readEntry() (e *Entry, keep bool, err error) {
	e = &Entry{Line: r.line}
	startLine, startCol := r.line, r.col
	var hasID, hasUpdated bool
	var badTime string
	for r.depth >= 2 {
		tok, err := r.token()
		if err != nil {
			return nil, false, err
		}
		t, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if r.depth != 3 {
			continue // never: children are read whole below
		}
		switch {
		case isAtom(t.Name, "id"):
			hasID = true
			err = r.textInto(&e.ID)
		case isAtom(t.Name, "updated"):
			hasUpdated = true
			badTime, err = r.entryTime(e)
		case isAtom(t.Name, "title"):
			err = r.textInto(&e.Title)
		case isAtom(t.Name, "link"):
			r.entryLink(e, t.Attr)
			err = r.skip()
		case isAtom(t.Name, "content"):
			err = r.readContent(e, t.Attr)
		default:
			err = r.skip()
		}
		if err != nil {
			return nil, false, err
		}
	}
	r.line, r.col = startLine, startCol
	switch {
	case !hasID || e.ID == "":
		r.warn(0, "entry without atom:id; skipped")
		return nil, false, nil
	case !hasUpdated:
		r.warn(0, "entry "+quoteShort(e.ID)+" without atom:updated; skipped")
		return nil, false, nil
	case badTime != "":
		r.warn(0, "entry "+quoteShort(e.ID)+": "+badTime+"; skipped")
		return nil, false, nil
	}
	r.classify(e)
	return e, true, nil
}

// entryTime reads an entry's atom:updated; badTime says why it cannot be.
func (r *Reader) entryTime(e *Entry) (badTime string, err error) {
	s, err := r.text()
	if err != nil {
		return "", err
	}
	t, terr := ParseTime(s)
	switch {
	case errors.Is(terr, errNoZone):
		r.warn(onceNoZone, terr.Error())
	case terr != nil:
		return "atom:updated " + terr.Error(), nil
	}
	e.Updated = t
	return "", nil
}

// entryLink keeps an alternate link in Links, any other in Related.
func (r *Reader) entryLink(e *Entry, attrs []xml.Attr) {
	rel := linkRel(attrs)
	href, ok := attr(attrs, "href")
	if !ok {
		r.warn(onceLinkNoHref, "link without href; ignored")
		return
	}
	l := Link{Href: r.resolve(href), Length: NoLength}
	if rel != "alternate" {
		l.Rel = r.strs.get(rel)
	}
	if typ, ok := attr(attrs, "type"); ok {
		l.Type = r.strs.get(strings.TrimSpace(typ))
	}
	if s, ok := attr(attrs, "length"); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || n < 0 {
			r.warn(onceBadLength, "link length that is not a number; ignored: "+quoteShort(s))
		} else {
			l.Length = n
		}
	}
	if l.Rel != "" {
		e.Related = append(e.Related, l)
		return
	}
	e.Links = append(e.Links, l)
}

// readContent reads atom:content and notes whether it is empty: no src,
// no child element, no text but white space.
func (r *Reader) readContent(e *Entry, attrs []xml.Attr) error {
	e.HasContent = true
	_, hasSrc := attr(attrs, "src")
	empty := !hasSrc
	end := r.depth - 1
	for r.depth > end {
		tok, err := r.token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			empty = false
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				empty = false
			}
		}
	}
	e.ContentEmpty = empty
	return nil
}

// classify sets e.Kind as the specification's implementation notes say.
func (r *Reader) classify(e *Entry) {
	switch {
	case len(e.Links) > 0:
		e.Kind = KindActive
		if e.HasContent {
			r.warn(onceContentAndLink, "entry with both alternate links and atom:content; read as active")
		}
	case e.HasContent && e.ContentEmpty:
		e.Kind = KindDeletion
	default:
		e.Kind = KindOther
		r.warn(onceOtherEntry, "entry "+quoteShort(e.ID)+" neither active (no alternate link) nor deletion (no empty atom:content)")
	}
}
