package resourcesync

import (
	"fmt"
	"rsfs/origin"
	"slices"
	"strings"
	"time"
)

// nextEntry finds the next entry's start tag (unless Header already read it)
// and reads the entry.
func (r *Reader) nextEntry() (*Entry, error) {
	for !r.pending {
		kind, err := r.rootChild()
		if err != nil {
			return nil, err
		}
		switch kind {
		case elURL, elSitemap:
			r.pending = true
			continue
		case elMD, elLN:
			r.warnHere(warnHeaderAfterEntries, "")
		}
		if err := r.skip(); err != nil {
			return nil, err
		}
	}
	r.pending = false
	return r.readEntry()
}

// readEntry reads a <url> or <sitemap> whose start tag was just read.
func (r *Reader) readEntry() (*Entry, error) {
	r.entries++
	if r.entries > r.opts.MaxEntries {
		return nil, r.errorHere(fmt.Sprintf("more than %d entries", r.opts.MaxEntries), ErrTooManyEntries)
	}
	if r.entries == sitemapEntryLimit+1 {
		r.warnHere(warnManyEntries, "")
	}
	startLine, startCol := r.sc.position(r.sc.tokOff)
	e := r.alloc.entry()
	e.MD.Length = NoLength
	depth := r.sc.depth()
	var haveLoc, haveMD bool
	for {
		r.sc.skipPlainText()
		if err := r.next(); err != nil {
			return nil, err
		}
		if r.sc.depth() < depth {
			break
		}
		if r.sc.kind != tokStart {
			continue
		}
		kind, err := r.element()
		if err != nil {
			return nil, err
		}
		switch kind {
		case elLoc:
			if haveLoc {
				return nil, r.errorHere("second <loc> in an entry", ErrStructure)
			}
			haveLoc = true
			err = r.readLoc(e)
		case elLastmod:
			err = r.readLastmod(e)
		case elChangefreq:
			err = r.readChangefreq(e)
		case elMD:
			if !haveLoc && !haveMD {
				r.warnHere(warnMDBeforeLoc, "")
			}
			if haveMD {
				err = r.readMoreMD(&e.MD)
				break
			}
			haveMD = true
			err = r.readMDElement(&e.MD)
		case elLN:
			err = r.readLinkElement(e)
		default:
			err = r.skip()
		}
		if err != nil {
			return nil, err
		}
	}
	if !haveLoc || e.Loc == "" {
		return nil, &ParseError{URL: r.url, Line: startLine, Column: startCol,
			Msg: fmt.Sprintf("<%s> without <loc>", r.sc.local), Err: ErrStructure}
	}
	r.checkEntry(e, startLine)
	if e.MD.Change == "" && r.listsChanges() {
		r.warn.add(warnNoChange, r.url, startLine, "") // the entry's first line
	}
	return e, nil
}

// listsChanges reports whether the document is one whose entries are
// changes, each with its change attribute: a Change List (1.1 §12.1), a
// Change Dump Manifest (§13.2), a Change Notification.
func (r *Reader) listsChanges() bool {
	if r.header.Root != URLSet {
		return false
	}
	switch r.header.MD.Capability {
	case CapChangeList, CapChangeDumpManifest, CapChangeNotification:
		return true
	}
	return false
}

func (r *Reader) readLoc(e *Entry) error {
	text, err := r.readText()
	if err != nil {
		return err
	}
	if len(text) > 0 {
		e.Loc = r.resolveURL(text)
	}
	return nil
}

func (r *Reader) readLastmod(e *Entry) error {
	start := r.sc.tokOff
	r.sc.mark = start // an error names the start tag, read before the text
	text, err := r.readText()
	r.sc.mark = noMark
	if err != nil {
		return err
	}
	e.Lastmod, err = r.parseTimeAt(start, "lastmod", text)
	return err
}

func (r *Reader) readChangefreq(e *Entry) error {
	text, err := r.readText()
	if err == nil {
		e.ChangeFreq = r.strs.get(text)
	}
	return err
}

func (r *Reader) readMDElement(md *MD) error {
	if err := r.readMD(md); err != nil {
		return err
	}
	return r.skip()
}

// readMoreMD reads a second (or later) rs:md of one element into md: an
// attribute md lacks is taken, one md has keeps its value, with a warning
// naming both where they differ (Kanazawa Bunko's Change Lists give one
// rs:md for hash, length and type and another for change).
func (r *Reader) readMoreMD(md *MD) error {
	r.warnHere(warnRepeatedMD, "")
	more := MD{Length: NoLength}
	if err := r.readMD(&more); err != nil {
		return err
	}
	for _, c := range mergeMD(md, &more) {
		r.warnHere(warnConflictingMD, c)
	}
	return r.skip()
}

// mergeMD fills what md lacks from more and returns, for each attribute
// both give with different values, "name: first (kept), then second".
func mergeMD(md, more *MD) []string {
	var conflicts []string
	str := func(name string, dst *string, v string) {
		switch {
		case *dst == "":
			*dst = v
		case v != "" && v != *dst:
			conflicts = append(conflicts, fmt.Sprintf("%s: %q kept, %q ignored", name, *dst, v))
		}
	}
	tm := func(name string, dst *time.Time, v time.Time) {
		switch {
		case dst.IsZero():
			*dst = v
		case !v.IsZero() && !v.Equal(*dst):
			conflicts = append(conflicts, fmt.Sprintf("%s: %s kept, %s ignored", name, dst.Format(time.RFC3339Nano), v.Format(time.RFC3339Nano)))
		}
	}
	capability, change := string(md.Capability), string(md.Change)
	str("capability", &capability, string(more.Capability))
	str("change", &change, string(more.Change))
	md.Capability, md.Change = Capability(capability), Change(change)
	str("type", &md.Type, more.Type)
	str("path", &md.Path, more.Path)
	str("encoding", &md.Encoding, more.Encoding)
	tm("at", &md.At, more.At)
	tm("completed", &md.Completed, more.Completed)
	tm("from", &md.From, more.From)
	tm("until", &md.Until, more.Until)
	tm("modified", &md.Modified, more.Modified)
	tm("datetime", &md.Datetime, more.Datetime)
	switch {
	case md.Length == NoLength:
		md.Length = more.Length
	case more.Length != NoLength && more.Length != md.Length:
		conflicts = append(conflicts, fmt.Sprintf("length: %d kept, %d ignored", md.Length, more.Length))
	}
	for _, h := range more.Hashes {
		i := slices.IndexFunc(md.Hashes, func(o Hash) bool { return o.Alg == h.Alg })
		switch {
		case i < 0:
			md.Hashes = append(slices.Clip(md.Hashes), h)
		case md.Hashes[i].Value != h.Value:
			conflicts = append(conflicts, fmt.Sprintf("hash %s: %s kept, %s ignored", h.Alg, md.Hashes[i].Value, h.Value))
		}
	}
	return conflicts
}

func (r *Reader) readLinkElement(e *Entry) error {
	l, err := r.readLink()
	if err != nil {
		return err
	}
	e.Links = append(e.Links, l)
	return r.skip()
}

// readMD fills md from the attributes of the current rs:md start tag.
func (r *Reader) readMD(md *MD) error {
	for _, a := range r.sc.attrs {
		if len(a.prefix) != 0 {
			r.checkPrefixed(a)
			continue
		}
		var err error
		v := a.value
		switch string(a.local) {
		case "capability":
			md.Capability = r.readCapability(v)
		case "at":
			md.At, err = r.parseTime("at", v)
		case "completed":
			md.Completed, err = r.parseTime("completed", v)
		case "from":
			md.From, err = r.parseTime("from", v)
		case "until":
			md.Until, err = r.parseTime("until", v)
		case "modified":
			md.Modified, err = r.parseTime("modified", v)
		case "datetime":
			md.Datetime, err = r.parseTime("datetime", v)
		case "change":
			md.Change = r.readChange(v)
		case "hash":
			md.Hashes, err = r.parseHashes(v)
		case "length":
			md.Length, err = r.parseLength(v)
		case "type":
			md.Type = r.strs.get(trimSpace(v))
		case "path":
			md.Path = r.alloc.str(v)
		case "encoding":
			md.Encoding = r.strs.get(trimSpace(v))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *Reader) readChange(v []byte) Change {
	c := Change(r.strs.get(trimSpace(v)))
	switch c {
	case ChangeCreated, ChangeUpdated, ChangeDeleted:
	default:
		r.warnHere(warnUnknownChange, string(c))
	}
	return c
}

// readLink reads the attributes of the current rs:ln start tag. A link
// dated by datetime (Memento's name for a memento's time, RFC 7089) rather
// than modified (the standard's, §14.6) is read as modified.
func (r *Reader) readLink() (Link, error) {
	l := Link{Length: NoLength}
	var datetime time.Time
	for _, a := range r.sc.attrs {
		if len(a.prefix) != 0 {
			r.checkPrefixed(a)
			continue
		}
		var err error
		v := a.value
		switch string(a.local) {
		case "rel":
			l.Rel = r.strs.get(trimSpace(v))
		case "href":
			if v = trimSpace(v); len(v) > 0 {
				l.Href = r.resolveURL(v)
			}
		case "pri":
			l.Pri, err = r.parsePri(v)
		case "hash":
			l.Hashes, err = r.parseHashes(v)
		case "length":
			l.Length, err = r.parseLength(v)
		case "modified":
			l.Modified, err = r.parseTime("modified", v)
		case "datetime":
			datetime, err = r.parseTime("datetime", v)
		case "type":
			l.Type = r.strs.get(trimSpace(v))
		case "path":
			l.Path = r.alloc.str(v)
		}
		if err != nil {
			return Link{}, err
		}
	}
	if l.Modified.IsZero() {
		l.Modified = datetime
	}
	return l, nil
}

// resolveURL resolves a <loc> or href, and drops any user information
// (user:password@) from it: a URL taken from a document never carries
// credentials to a request, nor a password to a log line.
func (r *Reader) resolveURL(ref []byte) string {
	if r.plainURLs.isPlain(ref) { // a plain host has no "@"
		return r.alloc.str(ref)
	}
	var s string
	if r.resolver.base == nil {
		s = r.alloc.str(ref)
	} else {
		var ok bool
		if s, ok = r.resolver.resolve(ref); !ok {
			r.warnHere(warnBadURL, s)
		}
	}
	if out, host, ok := origin.StripUserinfo(s); ok {
		r.warnHere(warnUserinfo, host)
		return out
	}
	return s
}

func (r *Reader) parseTime(name string, v []byte) (time.Time, error) {
	return r.parseTimeAt(r.sc.tokOff, name, v)
}

// parseTimeAt parses a datetime read from the element starting at off.
func (r *Reader) parseTimeAt(off int64, name string, v []byte) (time.Time, error) {
	t, flags, err := parseTime(v)
	if err != nil {
		return time.Time{}, r.errorAt(off, fmt.Sprintf("bad datetime %s=%q", name, v), ErrValue)
	}
	if flags&timeNoZone != 0 {
		r.warnHere(warnNoZone, string(v))
	}
	if flags&timeSpaceSeparator != 0 {
		r.warnHere(warnSpaceSeparator, string(v))
	}
	return t, nil
}

func (r *Reader) parseHashes(v []byte) ([]Hash, error) {
	if alg, value, ok := plainHash(trimSpace(v)); ok {
		return r.alloc.oneHash(Hash{Alg: alg, Value: r.alloc.str(value)}), nil
	}
	hs, flags, err := parseHashes(v)
	if err != nil {
		return nil, r.errorHere(fmt.Sprintf("bad hash: %v", err), ErrValue)
	}
	if flags&hashBase64 != 0 {
		r.warnHere(warnBase64Hash, string(trimSpace(v)))
	}
	if flags&hashOddForm != 0 {
		r.warnHere(warnHashForm, string(trimSpace(v)))
	}
	return hs, nil
}

func (r *Reader) parseLength(v []byte) (int64, error) {
	n, ok := parseDecimal(trimSpace(v), 1<<63-1)
	if !ok {
		return 0, r.errorHere(fmt.Sprintf("bad length %q", v), ErrValue)
	}
	return n, nil
}

// maxPri is the largest rs:ln pri the specification allows.
const maxPri = 999_999

func (r *Reader) parsePri(v []byte) (int, error) {
	n, ok := parseDecimal(trimSpace(v), maxPri)
	if !ok {
		return 0, r.errorHere(fmt.Sprintf("bad pri %q", v), ErrValue)
	}
	return int(n), nil
}

// parseDecimal parses a non-negative decimal integer no larger than limit.
func parseDecimal(b []byte, limit int64) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' || n > (limit-int64(c-'0'))/10 {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// readCapability reads a capability attribute. A non-standard name that
// real Sources publish for a standard capability (changelistindex,
// ResourceList) is read as the standard one, with a warning.
func (r *Reader) readCapability(v []byte) Capability {
	c := Capability(r.strs.get(trimSpace(v)))
	if std, ok := StandardCapability(c); ok && std != c {
		r.warnHere(warnNonStandardCapability, fmt.Sprintf("%q read as %q", c, std))
		return std
	}
	return c
}

// StandardCapability returns the standard capability a name stands for:
// itself if it is one, else the standard name it spells otherwise (in
// another case, or with an "index" suffix: in ResourceSync an index has the
// capability of the documents it names; or "capability", which WEKO3's
// Source Description gives its Capability List). ok is false for an
// unknown name.
func StandardCapability(c Capability) (Capability, bool) {
	if c.Known() {
		return c, true
	}
	name := strings.ToLower(string(c))
	if name == "capability" {
		return CapCapabilityList, true
	}
	for _, suffix := range []string{"", "-index", "_index", "index"} {
		base, found := strings.CutSuffix(name, suffix)
		if (found || suffix == "") && Capability(base).Known() {
			return Capability(base), true
		}
	}
	return c, false
}
