package changes

import (
	"strconv"
	"time"

	"rsfs/resourcesync"
	"rsfs/source"
)

// change is one Change List (or Change Dump Manifest, or notification)
// entry with the time it is ordered by and its key among the changes at
// that instant.
type change struct {
	at    time.Time
	key   string
	entry *resourcesync.Entry
	doc   string // the document that listed it
	// undated: the entry has no date of its own; at is its place in the
	// document. doubt: undated and at or before the position, yet the
	// catalog does not hold its result, so it is applied without moving
	// the position.
	undated, doubt bool
}

// coverage is the interval of changes a document speaks for: from its
// start (1.1's from) on. A document without from speaks only from its
// earliest dated change (first is its key), and not even for the other
// changes at that instant, which may have fallen out of it. known is false
// when it says nothing.
type coverage struct {
	start time.Time
	known bool
	first string // the earliest change's key, when the start is not a from
}

// gapAt reports whether changes at or after pos may be missing from the
// documents covered.
func (c coverage) gapAt(pos *Position) bool {
	if !c.known || pos.Time.IsZero() {
		return false
	}
	if c.start.After(pos.Time) {
		return true
	}
	if c.first != "" && c.start.Equal(pos.Time) {
		_, seen := pos.Seen[c.first]
		return !seen
	}
	return false
}

// earlier returns the coverage that starts first of a and b.
func (a coverage) earlier(b coverage) coverage {
	switch {
	case !a.known:
		return b
	case !b.known:
		return a
	case b.start.Before(a.start), b.start.Equal(a.start) && a.first != "" && b.first == "":
		return b
	}
	return a
}

// datedChanges dates the entries of one document by source.ChangeTime: by
// datetime, or by lastmod when no entry has a datetime (1.0). An undated
// entry is ordered by its position in
// the document (1.1 Example 19): it takes the latest time before it, else
// the document's from, else its first dated entry, else undated (the
// position's own time, so it is applied once). Repeats of a change at one
// instant get distinct keys by their order.
func datedChanges(doc string, h *resourcesync.Header, entries []resourcesync.Entry, undated time.Time) ([]change, coverage) {
	byLastmod := source.DatedByLastmod(entries)
	dateOf := func(e *resourcesync.Entry) time.Time { return source.ChangeTime(e, byLastmod) }
	cov := coverage{start: h.MD.From, known: !h.MD.From.IsZero()}
	running := h.MD.From
	if running.IsZero() {
		for i := range entries {
			if t := dateOf(&entries[i]); !t.IsZero() {
				running = t
				break
			}
		}
	}
	if running.IsZero() {
		running = undated
	}
	out := make([]change, 0, len(entries))
	repeats := map[repeatKey]int{}
	for i := range entries {
		e := &entries[i]
		at := dateOf(e)
		undated := at.IsZero()
		if undated {
			at = running
		} else {
			if at.After(running) {
				running = at
			}
			cov = cov.earlier(coverage{start: at, known: true, first: keyOf(e, at, repeats)})
		}
		key := keyOf(e, at, repeats)
		repeats[repeatKey{baseKey(e), at.UnixNano()}]++
		out = append(out, change{at: at, key: key, entry: e, doc: doc, undated: undated})
	}
	return out, cov
}

func baseKey(e *resourcesync.Entry) string { return string(e.MD.Change) + " " + e.Loc }

// keyOf is a change's key among the changes at its instant: the n-th
// repeat of one change at one instant is told apart by #n.
func keyOf(e *resourcesync.Entry, at time.Time, repeats map[repeatKey]int) string {
	key := baseKey(e)
	if n := repeats[repeatKey{key, at.UnixNano()}]; n > 0 {
		key += "#" + strconv.Itoa(n)
	}
	return key
}

type repeatKey struct {
	key string
	at  int64
}
