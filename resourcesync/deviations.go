package resourcesync

import (
	"fmt"
	"hash/maphash"
	"time"
)

// deviations is what the Reader keeps to find the deviations that span
// entries: the newest change datetime so far, and the locs seen in a
// document where each is listed once.
type deviations struct {
	mdLine       int       // the root rs:md's line
	headerDone   bool      // checkHeader has run
	newest       time.Time // the newest datetime so far
	datetimes    bool      // an entry has a datetime
	newestMod    time.Time // the newest lastmod so far
	modInversion *Warning  // the first entry dated by lastmod before one above it
	modInverted  int       // the entries dated by lastmod before one above them
	seed         maphash.Seed
	locs         hashSet
	changesOrder bool                // the entries are changes, in time order (§12.1, §13.2)
	onceEach     bool                // each loc is listed once
	caps         map[Capability]bool // of a Capability List: the capabilities named
}

// checkHeader reports the header's deviations, once, when the first entry
// or the end of the document is reached: a Resource List, Resource Dump
// or manifest of one without at, a change document without from (Table 4).
func (r *Reader) checkHeader() {
	d := &r.dev
	if d.headerDone {
		return
	}
	d.headerDone = true
	md := &r.header.MD
	if !md.At.IsZero() && !md.Completed.IsZero() && md.Completed.Before(md.At) {
		r.warn.add(warnInvertedRange, r.url, d.mdLine, fmt.Sprintf("at %s, completed %s",
			md.At.UTC().Format(time.RFC3339Nano), md.Completed.UTC().Format(time.RFC3339Nano)))
	}
	switch md.Capability {
	case CapResourceList, CapResourceDump, CapResourceDumpManifest:
		if md.At.IsZero() {
			r.warn.add(warnNoAt, r.url, d.mdLine, "")
		}
	case CapChangeList, CapChangeDump, CapChangeDumpManifest:
		if md.From.IsZero() {
			r.warn.add(warnNoFrom, r.url, d.mdLine, "")
		}
	}
	urlset := r.header.Root == URLSet
	d.changesOrder = urlset && (md.Capability == CapChangeList || md.Capability == CapChangeDumpManifest)
	// A Capability List's entries are checked by capability (checkEntryMD).
	d.onceEach = md.Capability.Known() && !d.changesOrder && md.Capability != CapCapabilityList
}

// checkEntry reports an entry's deviations from the entries before it:
// a change out of time order or outside the document's from and until;
// a loc listed twice where each is listed once. Repeats are looked for
// (and counted) among the first 50,000 entries only (the Sitemap limit),
// so that the Reader's memory stays bounded.
func (r *Reader) checkEntry(e *Entry, line int) {
	d := &r.dev
	if d.changesOrder && !e.MD.Datetime.IsZero() {
		r.checkChangeTime(e, line)
	}
	if d.changesOrder && !d.datetimes && !e.Lastmod.IsZero() {
		r.checkLastmodOrder(e, line)
	}
	r.checkEntryMD(e, line)
	if !d.onceEach || r.entries > sitemapEntryLimit {
		d.locs = hashSet{}
		return
	}
	if d.locs.slots == nil {
		d.seed = maphash.MakeSeed()
	}
	if !d.locs.add(maphash.String(d.seed, e.Loc)) {
		r.warn.add(warnRepeatedLoc, r.url, line, e.Loc)
	}
}

// hashSet is a set of 64-bit hashes, open addressed and filled to 13/16,
// so that the 50,000 hashes of a full Resource List fit in 512 KiB: a Go
// map of them cost a quarter of the parse.
type hashSet struct {
	slots []uint64 // 0 is empty
	n     int
}

// add adds h and reports whether it was new.
func (s *hashSet) add(h uint64) bool {
	if h == 0 {
		h = 1
	}
	if 16*(s.n+1) > 13*len(s.slots) {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case h:
			return false
		case 0:
			s.slots[i] = h
			s.n++
			return true
		}
	}
}

func (s *hashSet) grow() {
	old := s.slots
	s.slots = make([]uint64, max(1024, 2*len(old)))
	s.n = 0
	for _, h := range old {
		if h != 0 {
			s.add(h)
		}
	}
}

func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func (r *Reader) checkChangeTime(e *Entry, line int) {
	d, md, t := &r.dev, &r.header.MD, e.MD.Datetime
	d.datetimes = true
	if t.Before(d.newest) {
		r.warn.add(warnUnordered, r.url, line, fmt.Sprintf("%s at %s after %s", e.Loc, rfc(t), rfc(d.newest)))
	} else {
		d.newest = t
	}
	if (!md.From.IsZero() && t.Before(md.From)) || (!md.Until.IsZero() && t.After(md.Until)) {
		r.warn.add(warnOutsideSpan, r.url, line, fmt.Sprintf("%s at %s", e.Loc, rfc(t)))
	}
}

// checkEntryMD reports what an entry's rs:md lacks or repeats: a manifest
// entry without path (but a deletion's), a capability a Capability List
// names twice.
func (r *Reader) checkEntryMD(e *Entry, line int) {
	d := &r.dev
	switch c := r.header.MD.Capability; {
	case r.header.Root != URLSet:
	case c == CapResourceDumpManifest || (c == CapChangeDumpManifest && e.MD.Change != ChangeDeleted):
		if e.MD.Path == "" {
			r.warn.add(warnNoPath, r.url, line, e.Loc)
		}
	case c == CapCapabilityList && e.MD.Capability != "":
		if d.caps[e.MD.Capability] {
			r.warn.add(warnCapabilityTwice, r.url, line, string(e.MD.Capability))
		}
		if d.caps == nil {
			d.caps = map[Capability]bool{}
		}
		d.caps[e.MD.Capability] = true
	}
}

// atomNS is the Atom namespace, in which an old DSpace library wrote the
// attributes of rs:md and rs:ln (atom:rel, atom:href, atom:modified).
const atomNS = "http://www.w3.org/2005/Atom"

// standardAttrs are the attributes the standard defines on rs:md and
// rs:ln (§7 Table 3).
var standardAttrs = map[string]bool{
	"at": true, "capability": true, "change": true, "completed": true, "datetime": true,
	"encoding": true, "from": true, "hash": true, "href": true, "length": true,
	"modified": true, "path": true, "pri": true, "rel": true, "type": true, "until": true,
}

// checkPrefixed reports one of the standard's attributes written with the
// prefix of the ResourceSync or Atom namespace (rs:capability, atom:rel):
// §7 has them without one. It is ignored, as any prefixed attribute is (a
// community's own, in its own namespace, is allowed).
func (r *Reader) checkPrefixed(a rawAttr) {
	if !standardAttrs[string(a.local)] {
		return
	}
	if id, uri, ok := r.ns.lookup(a.prefix); ok && (id == nsRS || uri == atomNS) {
		r.warnHere(warnPrefixedAttr, string(a.prefix)+":"+string(a.local))
	}
}

// checkLastmodOrder keeps the first change out of lastmod order: a list
// none of whose entries has a datetime is dated by lastmod (as in 1.0),
// which is known only at its end (checkEnd).
func (r *Reader) checkLastmodOrder(e *Entry, line int) {
	d, t := &r.dev, e.Lastmod
	if !t.Before(d.newestMod) {
		d.newestMod = t
		return
	}
	d.modInverted++
	if d.modInversion == nil {
		w := warnUnordered.At(r.url, line, fmt.Sprintf("%s at lastmod %s after %s", e.Loc, rfc(t), rfc(d.newestMod)))
		d.modInversion = &w
	}
}

// checkEnd reports, at the end of the document, what only its end tells:
// changes out of lastmod order in a list dated by lastmod.
func (r *Reader) checkEnd() {
	d := &r.dev
	if d.modInversion != nil && !d.datetimes {
		r.warn.n[warnUnordered] += d.modInverted
		r.warn.put(warnUnordered, *d.modInversion)
	}
}
