package changes

import (
	"slices"
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
	// the position. superseded: undated, and a later entry of its
	// document is for the same URI, so it is never applied (collect).
	undated, doubt, superseded bool
}

// coverage is what the documents read speak for: a span per document,
// from its start (its from) to its end (its until; open without). A
// document without from speaks only from its earliest dated change (first
// is its key), and not even for the other changes at that instant, which
// may have fallen out of it. A document that says neither adds no span.
type coverage struct{ spans []span }

type span struct {
	start, end time.Time // end zero: open
	first      string    // the earliest change's key, when the start is not a from
}

// holeSlack is the hole between two spans still taken as contiguous:
// Sources write from and until at second precision, so a list's from a
// second after the previous one's until is the common case, not a hole.
const holeSlack = time.Second

// gapAt reports whether changes at or after pos may be missing from the
// documents covered: no span reaches back to pos, or the spans leave a
// hole after it. resume is where the spans go on after the first gap.
func (c coverage) gapAt(pos *Position) (gap bool, resume time.Time) {
	if len(c.spans) == 0 || pos.Time.IsZero() {
		return false, time.Time{}
	}
	spans := slices.Clone(c.spans)
	slices.SortStableFunc(spans, func(a, b span) int { return a.start.Compare(b.start) })
	cursor := pos.Time
	for i, sp := range spans {
		if !sp.end.IsZero() && sp.end.Before(cursor) {
			continue // over before the cursor
		}
		if sp.start.After(cursor.Add(slackAt(cursor, pos))) {
			return true, sp.start
		}
		if sp.start.Equal(pos.Time) && cursor.Equal(pos.Time) && sp.first != "" {
			if _, seen := pos.Seen[sp.first]; !seen && !spansBefore(spans[:i], pos.Time) {
				return true, sp.start
			}
		}
		if sp.end.IsZero() {
			return false, time.Time{}
		}
		if sp.end.After(cursor) {
			cursor = sp.end
		}
	}
	return false, time.Time{}
}

// slackAt is the slack allowed before a span that starts after cursor:
// none at the position itself (a document that starts after it is a gap),
// holeSlack between documents.
func slackAt(cursor time.Time, pos *Position) time.Duration {
	if cursor.Equal(pos.Time) {
		return 0
	}
	return holeSlack
}

// spansBefore reports whether one of spans reaches over t from before it.
func spansBefore(spans []span, t time.Time) bool {
	for _, sp := range spans {
		if sp.start.Before(t) && (sp.end.IsZero() || !sp.end.Before(t)) {
			return true
		}
	}
	return false
}

// with returns the coverage of a and b together.
func (a coverage) with(b coverage) coverage {
	if len(b.spans) == 0 {
		return a
	}
	return coverage{spans: append(slices.Clip(a.spans), b.spans...)}
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
	sp := span{start: h.MD.From, end: h.MD.Until}
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
	last := make(map[string]int, len(entries)) // by URI: its last entry
	for i := range entries {
		last[entries[i].Loc] = i
	}
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
			if sp.start.IsZero() || (sp.first != "" && at.Before(sp.start)) {
				sp.start, sp.first = at, keyOf(e, at, repeats)
			}
		}
		key := keyOf(e, at, repeats)
		repeats[repeatKey{baseKey(e), at.UnixNano()}]++
		out = append(out, change{at: at, key: key, entry: e, doc: doc, undated: undated,
			superseded: undated && last[e.Loc] > i})
	}
	var cov coverage
	if !sp.start.IsZero() {
		cov.spans = []span{sp}
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
