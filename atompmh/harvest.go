package atompmh

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// Fetch returns the body of the document at url; the harvest closes it.
// When conditional is true (only ever for the subscription document, after
// a Whole harvest) it may answer ErrNotModified: a conditional GET answered
// 304. When false it must fetch the document: after a broken chain the
// subscription document is unchanged but the walk must be done again.
type Fetch func(ctx context.Context, url string, conditional bool) (io.ReadCloser, error)

// ErrNotModified is what a Fetch returns for an unchanged subscription
// document.
var ErrNotModified = errors.New("not modified")

// DefaultMaxDocuments bounds the documents one harvest walks.
const DefaultMaxDocuments = 100_000

// State is what a consumer keeps between harvests of one feed.
type State struct {
	// Mark is the subscription document's atom:updated at the last harvest
	// that read the chain to its end, to a complete document or to a
	// document no newer than the Mark before it. Zero before the first.
	Mark time.Time
	// Broken: the last harvest was not Whole; the next one fetches the
	// subscription document unconditionally and walks again.
	Broken bool
	// Pool holds the active entry of each record, by atom:id.
	Pool map[string]*Entry
	// Deleted holds, for records not in the pool, the time of the newest
	// deletion entry read, so that an older entry of the record read later
	// (a historical entry in an archive) does not bring it back.
	Deleted map[string]time.Time
	// Digests holds the SHA-256 of each archive document (by URL) as last
	// read, to notice one that changed (see Harvest).
	Digests map[string][sha256.Size]byte
}

// NewState returns the state before the first harvest.
func NewState() *State {
	return &State{Pool: make(map[string]*Entry), Deleted: make(map[string]time.Time),
		Digests: make(map[string][sha256.Size]byte)}
}

// Op is what a change does to the pool.
type Op uint8

const (
	OpCreate Op = iota + 1
	OpUpdate
	OpDelete
)

func (o Op) String() string {
	switch o {
	case OpCreate:
		return "create"
	case OpUpdate:
		return "update"
	case OpDelete:
		return "delete"
	}
	return "?"
}

// Change is one record's net change in a harvest.
type Change struct {
	Op      Op
	ID      string
	Updated time.Time // the entry's; for a record absent from a complete feed, the feed's
	Entry   *Entry    // the new active entry; nil for OpDelete
}

// Counts are the entries a harvest read, by what they turned out to be.
type Counts struct {
	Active     int // the newest entry of a record, active
	Historical int // active entries of a record that has a newer entry
	Deletion   int // deletion entries
	Other      int // entries the protocol does not define, skipped
}

// Result is what a harvest read and did.
type Result struct {
	// NotModified: the subscription document was answered ErrNotModified;
	// nothing else was read or changed.
	NotModified bool
	// Documents are the URLs fetched, in order, the subscription first.
	Documents []string
	// Changes are the net changes to the pool in Updated order (then by
	// ID): one per record at most.
	Changes []Change
	// Whole: the walk read all it needed (the end of the chain, a
	// complete document, or a document no newer than the Mark) and the
	// Mark moved to Updated. When false the changes read were applied and
	// the Mark was kept, so the next harvest walks that part again.
	Whole bool
	// Complete: a complete document (fh:complete) set the pool.
	Complete bool
	// Updated is the subscription document's atom:updated.
	Updated  time.Time
	Counts   Counts
	Warnings []Warning
}

// Harvester harvests one feed.
type Harvester struct {
	Fetch        Fetch
	Options      Options // per document
	MaxDocuments int     // 0 means DefaultMaxDocuments
}

// Harvest reads the feed whose subscription document is at subscription
// and applies what it read to st (see the package documentation for the
// rules). It fails, changing nothing, when the subscription document cannot
// be fetched or read or ctx ends; a later document that cannot be is a
// broken chain: a warning, and a Result that is not Whole.
func (h *Harvester) Harvest(ctx context.Context, subscription string, st *State) (*Result, error) {
	w := walk{h: h, st: st, res: &Result{}, newest: make(map[string]*Entry),
		digests: make(map[string][sha256.Size]byte)}
	if err := w.run(ctx, subscription); err != nil {
		if errors.Is(err, ErrNotModified) {
			return &Result{NotModified: true, Documents: w.res.Documents}, nil
		}
		return nil, err
	}
	w.apply()
	return w.res, nil
}

// walk is one harvest in progress.
type walk struct {
	h          *Harvester
	st         *State
	res        *Result
	newest     map[string]*Entry // by id, the newest entry read (deletions too)
	activeRead int
	complete   *Feed                        // the complete document that ended the walk
	digests    map[string][sha256.Size]byte // of the archive documents read
	full       bool                         // a changed archive was met: walk to the end of the chain
}

// run walks the chain from the subscription document, folding entries
// into w.newest.
func (w *walk) run(ctx context.Context, url string) error {
	visited := make(map[string]bool)
	maxDocs := w.h.MaxDocuments
	if maxDocs <= 0 {
		maxDocs = DefaultMaxDocuments
	}
	var prev *Feed
	for i := 0; ; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if visited[url] {
			w.warnDoc(prev.URL, "prev-archive "+url+" was read already in this walk (a cycle); chain broken, harvest mark kept")
			return nil
		}
		if i == maxDocs {
			w.warnDoc(prev.URL, fmt.Sprintf("more than %d documents in the chain; chain broken, harvest mark kept", maxDocs))
			return nil
		}
		visited[url] = true
		feed, err := w.read(ctx, url)
		if i == 0 {
			if err != nil {
				return err
			}
			w.res.Updated = feed.Updated
		} else if err != nil {
			if ctx.Err() != nil {
				return ctx.Err() // not a broken chain: the harvest was stopped
			}
			w.warnDoc(prev.URL, "prev-archive: "+err.Error()+"; chain broken, harvest mark kept")
			return nil
		}
		if w.stopsAt(feed, prev, i) {
			w.res.Whole = true
			return nil
		}
		prev, url = feed, feed.PrevArchive
	}
}

// stopsAt reports whether the walk ends at feed, which has been read.
func (w *walk) stopsAt(feed, prev *Feed, i int) bool {
	if prev != nil && !prev.Updated.IsZero() && feed.Updated.After(prev.Updated) {
		w.warnDoc(feed.URL, "archive document newer than the document linking to it ("+prev.URL+")")
	}
	mark := w.st.Mark
	switch {
	case feed.Complete:
		if feed.PrevArchive != "" {
			w.warnDoc(feed.URL, "complete document with a prev-archive link; the link is not followed")
		}
		w.complete = feed
		return true
	case !mark.IsZero() && feed.Updated.IsZero():
		w.warnDoc(feed.URL, "document without atom:updated; the walk goes on")
	case !mark.IsZero() && !feed.Updated.After(mark) && !w.full:
		if i > 0 && w.changed(feed.URL) {
			w.warnDoc(feed.URL, "archive document changed since the last harvest read it; walking the whole chain")
			w.full = true
			break
		}
		return true
	}
	return feed.PrevArchive == ""
}

// read fetches and reads one document, folding its entries. For the
// subscription document, an error leaves nothing folded that matters: the
// harvest fails and w is dropped.
func (w *walk) read(ctx context.Context, url string) (*Feed, error) {
	w.res.Documents = append(w.res.Documents, url)
	conditional := len(w.res.Documents) == 1 && !w.st.Broken && !w.st.Mark.IsZero()
	body, err := w.h.Fetch(ctx, url, conditional)
	if err != nil {
		if errors.Is(err, ErrNotModified) && conditional {
			return nil, err
		}
		return nil, fmt.Errorf("fetching %s: %w", url, err)
	}
	defer body.Close()
	var src io.Reader = body
	var digest hash.Hash
	if len(w.res.Documents) > 1 { // an archive document
		digest = sha256.New()
		src = io.TeeReader(body, digest)
	}
	r, err := NewReader(src, url, w.h.Options)
	if err != nil {
		return nil, err
	}
	defer func() { w.res.Warnings = append(w.res.Warnings, r.Warnings()...) }()
	if _, err := r.Header(); err != nil {
		return nil, err
	}
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		w.fold(e)
	}
	if digest != nil { // read whole: the digest is the document's
		w.digests[url] = [sha256.Size]byte(digest.Sum(nil))
	}
	f := r.Feed()
	f.Warnings = nil
	return &f, nil
}

// fold keeps e if it is the newest entry of its record read so far. Of two
// entries of one time, a deletion wins over an active entry, and otherwise
// the one read first (from the newer document) is kept.
func (w *walk) fold(e *Entry) {
	switch e.Kind {
	case KindOther:
		w.res.Counts.Other++
		return
	case KindDeletion:
		w.res.Counts.Deletion++
	case KindActive:
		w.activeRead++
	}
	cur, ok := w.newest[e.ID]
	if !ok || e.Updated.After(cur.Updated) ||
		(e.Updated.Equal(cur.Updated) && e.Kind == KindDeletion && cur.Kind != KindDeletion) {
		w.newest[e.ID] = e
	}
}

// changed reports whether the archive document at url, read whole in this
// walk, differs from when a harvest read it last.
func (w *walk) changed(url string) bool {
	old, ok := w.st.Digests[url]
	return ok && old != w.digests[url]
}

func (w *walk) warnDoc(docURL, msg string) {
	w.res.Warnings = append(w.res.Warnings, Warning{URL: docURL, Msg: msg})
}

// apply merges what the walk read into the state and lists the changes.
func (w *walk) apply() {
	for _, e := range w.newest {
		if e.Kind == KindActive {
			w.res.Counts.Active++
		}
	}
	w.res.Counts.Historical = w.activeRead - w.res.Counts.Active
	if w.complete != nil {
		w.applyComplete()
	} else {
		for id, e := range w.newest {
			w.applyEntry(id, e)
		}
	}
	slices.SortFunc(w.res.Changes, func(a, b Change) int {
		if c := a.Updated.Compare(b.Updated); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	w.st.Broken = !w.res.Whole
	if w.st.Digests == nil {
		w.st.Digests = make(map[string][sha256.Size]byte)
	}
	maps.Copy(w.st.Digests, w.digests)
	if w.res.Whole {
		if w.res.Updated.Before(w.st.Mark) {
			w.warnDoc(w.res.Documents[0], "subscription document older than the last harvest; harvest mark kept")
		} else {
			w.st.Mark = w.res.Updated
		}
	}
}

// applyEntry applies the newest entry of one record read by an
// incremental walk: only an entry newer than what the state holds
// changes it, and a deletion wins a tie.
func (w *walk) applyEntry(id string, e *Entry) {
	old, inPool := w.st.Pool[id]
	delAt, deleted := w.st.Deleted[id]
	switch e.Kind {
	case KindActive:
		if (inPool && !e.Updated.After(old.Updated)) || (deleted && !e.Updated.After(delAt)) {
			return
		}
		w.st.Pool[id] = e
		delete(w.st.Deleted, id)
		op := OpCreate
		if inPool {
			op = OpUpdate
		}
		w.res.Changes = append(w.res.Changes, Change{Op: op, ID: id, Updated: e.Updated, Entry: e})
	case KindDeletion:
		if inPool && e.Updated.Before(old.Updated) {
			return
		}
		if inPool {
			delete(w.st.Pool, id)
			w.res.Changes = append(w.res.Changes, Change{Op: OpDelete, ID: id, Updated: e.Updated})
		}
		if !deleted || e.Updated.After(delAt) {
			w.st.Deleted[id] = e.Updated
		}
	}
}

// applyComplete makes the pool what the walk read down to a complete
// document: records absent from it are deleted, whatever their times.
func (w *walk) applyComplete() {
	w.res.Complete = true
	pool := make(map[string]*Entry, len(w.newest))
	deleted := make(map[string]time.Time)
	for id, e := range w.newest {
		if e.Kind != KindActive {
			deleted[id] = e.Updated
			continue
		}
		pool[id] = e
		old, ok := w.st.Pool[id]
		switch {
		case !ok:
			w.res.Changes = append(w.res.Changes, Change{Op: OpCreate, ID: id, Updated: e.Updated, Entry: e})
		case !old.Updated.Equal(e.Updated) || !slices.Equal(old.Links, e.Links) || !slices.Equal(old.Related, e.Related):
			w.res.Changes = append(w.res.Changes, Change{Op: OpUpdate, ID: id, Updated: e.Updated, Entry: e})
		}
	}
	for id := range w.st.Pool {
		if _, ok := pool[id]; !ok {
			w.res.Changes = append(w.res.Changes, Change{Op: OpDelete, ID: id, Updated: w.complete.Updated})
		}
	}
	w.st.Pool, w.st.Deleted = pool, deleted
}
