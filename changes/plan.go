package changes

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"rsfs/resourcesync"
	"rsfs/source"
)

// Inspect is src.Inspect's report with each set's change documents
// reported and its follow plan and newest change worked out, by one walk
// of the follower's own engine (Plan) that reads each change document
// once: source counts what its own documents hold, but cannot follow.
func Inspect(ctx context.Context, src *source.Source) (*source.Report, error) {
	rep, err := src.Inspect(ctx)
	if err != nil {
		return nil, err
	}
	for i, set := range src.Sets() {
		if i >= len(rep.Sets) {
			break
		}
		sr := &rep.Sets[i]
		var listedAt time.Time
		if sr.ListedAt != nil {
			listedAt = *sr.ListedAt
		}
		p := plan(ctx, src, set, listedAt, sr)
		sr.Follow, sr.NewestChange = p.Follow, p.Newest
	}
	rep.Settle()
	return rep, ctx.Err()
}

// SetPlan is how a mount would follow a set: its follow plan, and the
// newest change its change documents list, dated as the follower dates it
// (changes dated more than source.FutureBound ahead of now aside).
type SetPlan struct {
	Follow source.FollowPlan
	Newest *time.Time
}

// Plan walks set's change documents as a mount's first poll after a load
// does, from the Resource Lists' time listedAt (documents read whole),
// and says where it would stand: the position the apply plan moves it to,
// or listedAt while a document cannot be read (the follower's position
// holds then); the documents each poll reads once caught up (an index's
// children closed before that position are skipped); and what would keep
// following from being exact.
func Plan(ctx context.Context, src *source.Source, set *source.Set, listedAt time.Time) SetPlan {
	return plan(ctx, src, set, listedAt, nil)
}

// plan is Plan; sr, when set, gets the reports of the change documents
// the walk read (walkReport.fill).
func plan(ctx context.Context, src *source.Source, set *source.Set, listedAt time.Time, sr *source.SetReport) SetPlan {
	lists, dumps := src.Docs(set, resourcesync.CapChangeList), src.Docs(set, resourcesync.CapChangeDump)
	var out SetPlan
	if len(lists)+len(dumps) == 0 {
		if !listedAt.IsZero() {
			out.Follow.Position = &listedAt
		}
		out.Follow.Warnings = []string{"no Change List: a mount shows this set as listed and does not follow it"}
		return out
	}
	w := newWalk(src, onceReads{wholeReads{src}, map[string]onceRead{}}, Position{Time: listedAt}, time.Now())
	if sr != nil {
		w.report = newWalkReport(sr)
	}
	w.changeLists(ctx, lists)
	w.changeDumps(ctx, dumps)
	if w.report != nil {
		w.report.fill(ctx, src, w)
	}
	pos := w.pos.clone()
	if len(w.failed) == 0 { // a dry run of a poll's apply: no catalog, the position advances
		a := &applier{fail: failHold, move: posAdvance, pos: &pos, horizon: w.horizon}
		_, _ = a.apply(changeSteps(planApply(w.changes, nil), nil, 0, true))
	}
	if !pos.Time.IsZero() {
		t := pos.Time
		out.Follow.Position = &t
	}
	out.Follow.Polled = w.polled(pos.Time)
	out.Follow.Warnings = w.planWarnings(listedAt)
	for _, lr := range w.lists {
		if !lr.newest.IsZero() && (out.Newest == nil || lr.newest.After(*out.Newest)) {
			t := lr.newest
			out.Newest = &t
		}
	}
	return out
}

// polled returns the documents a caught-up poll at pos reads: those
// walked, less an index's children closed (by their entry's until) before
// pos, and their own children; each once. An index answering 304 has its
// children read again, a Change Dump index's as a Change List index's.
func (w *walk) polled(pos time.Time) []string {
	keep := make([]bool, len(w.visits))
	var out []string
	for i, v := range w.visits {
		ok := v.parent < 0 || keep[v.parent]
		if !v.until.IsZero() && v.until.Before(pos) {
			ok = false
		}
		keep[i] = ok
		if ok && !slices.Contains(out, v.url) { // a list named twice is read twice, listed once
			out = append(out, v.url)
		}
	}
	return out
}

// planWarnings says, per document walked, what keeps following it from
// being exact: it could not be read; a Change List without from, or that
// starts after the Resource Lists' time with nothing before it (a gap);
// entries the list does not date; changes dated in the future.
func (w *walk) planWarnings(listedAt time.Time) []string {
	read := map[string]*listRead{}
	for i := range w.lists {
		read[w.lists[i].url] = &w.lists[i]
	}
	rfc := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	// A list that starts after the Resource Lists' time leaves changes
	// unlisted only where no other list covers them: an index's next child
	// starts where the one before it ends.
	gap, resume := w.cov.gapAt(&Position{Time: listedAt})
	var out []string
	visited := make(map[string]bool, len(w.visits))
	for _, v := range w.visits {
		visited[v.url] = true
		if err, failed := w.failed[v.url]; failed {
			out = append(out, fmt.Sprintf("%s could not be read (%s): a mount retries it at each poll", v.url, cause(err)))
			continue
		}
		lr := read[v.url]
		if lr == nil || lr.dump {
			continue // an index, or a Change Dump
		}
		switch md := &lr.md; {
		case md.From.IsZero():
			out = append(out, fmt.Sprintf("%s has no from: whether it lists every change since the Resource Lists cannot be told", v.url))
		case gap && md.From.Equal(resume):
			out = append(out, fmt.Sprintf("%s starts at %s, after the Resource Lists' time %s: changes in between are not listed",
				v.url, rfc(md.From), rfc(listedAt)))
		}
		if lr.undated > 0 {
			what := "datetime"
			if lr.byLastmod {
				what = "datetime or lastmod (dated by lastmod, as in 1.0)"
			}
			out = append(out, fmt.Sprintf("%s has %d entries without %s: each is ordered by its place in the list", v.url, lr.undated, what))
		}
		if lr.unsaid > 0 {
			out = append(out, v.url+" has "+unsaidWarning(lr.unsaid))
		}
		if lr.future > 0 {
			out = append(out, fmt.Sprintf("%s has %d changes dated in the future (the latest %s)", v.url, lr.future, rfc(lr.futureNewest)))
		}
	}
	// What failed without being a document walked (a Change Dump's package,
	// an index nested too deep) holds the position too: said as well.
	for _, u := range slices.Sorted(maps.Keys(w.failed)) {
		if !visited[u] {
			out = append(out, fmt.Sprintf("%s could not be read (%s): a mount retries it at each poll", u, cause(w.failed[u])))
		}
	}
	return out
}

// cause is a walk's error for a document without the walk's own prefix,
// as inspect says it.
func cause(err error) string {
	msg := err.Error()
	for _, p := range []string{"change list: ", "change dump: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return msg
}
