package changes

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"rsfs/catalog"
	"rsfs/resourcesync"
	"rsfs/source"
)

// Every change rsfs applies goes through apply: a poll's and a push's, a
// Resource List's differences a Framework Notification names, Truth's,
// drift repair's, a reload's removals, and Plan's walk of a cloned
// position (a dry run: no catalog). What differs between them is two
// parameters: what a change that fails does (failPolicy) and how the
// position moves (posPolicy).

// failPolicy is what apply does with a change that cannot be applied (its
// resource cannot be resolved, or the catalog has no room for it).
type failPolicy int

const (
	// failHold: the change is retried at the next poll: the position
	// stays before it (posAdvance) and it is not marked ahead (posAhead);
	// after maxAttempts polls it is given up (Follower.giveUp). Polls and
	// pushes.
	failHold failPolicy = iota
	// failSkip: the change is left out with a warning naming it and the
	// error; the others go on. Resource List differences (the polls carry
	// the change) and drift repair (the next repair retries it).
	failSkip
	// failAbort: apply stops at the change and returns its error. Truth
	// (a truth that lacks a change is no truth) and a reload.
	failAbort
)

// posPolicy is how apply moves a position.
type posPolicy int

const (
	// posAdvance: changes behind the position are passed over; the
	// position moves past each change applied (or covered), never past
	// one held, nor past the horizon (a change dated later is marked
	// ahead). A poll that read every document.
	posAdvance posPolicy = iota
	// posAhead: changes behind the position are passed over (but doubts);
	// each change applied at or after the position is marked ahead of it,
	// which stays. Pushes, a poll that could not read every document, and
	// Resource List differences (applier.regardless).
	posAhead
	// posNone: no position: every change is applied. Truth, drift repair,
	// a reload.
	posNone
)

// step is one change to make to a catalog: the version of a resource to
// upsert, or its removal.
type step struct {
	c   *change           // the change it comes from; nil for drift repair's and a reload's
	uri string            // the resource's
	res *catalog.Resource // the version to upsert; nil: remove uri
	err error             // why it cannot be applied, found before the catalog is asked
	// covered: a later change to the same URI in the batch supersedes it;
	// the position still moves past it.
	covered bool
}

// retrier is the failure policy failHold's memory: how often a change
// failed (the Follower's failures, by key).
type retrier interface {
	// giveUp counts a failure of c, of set (its number), and reports
	// whether to stop holding the position for it, with the effects of
	// marking it given up.
	giveUp(c *change, set uint16, err error) ([]catalog.Effect, bool)
	// appliedOnce forgets the failures of a change applied.
	appliedOnce(c *change)
}

// applier applies steps to a catalog by its two policies.
type applier struct {
	cat  *catalog.Catalog // nil: a dry run (Plan): nothing applied, the position moves as it would
	set  uint16           // the set's number (catalog.Resource.Set)
	fail failPolicy
	move posPolicy
	pos  *Position // posAdvance, posAhead: the position moved or marked
	// mu, when set, is held while the position changes (its readers'
	// lock); nil when no one else sees it.
	mu      sync.Locker
	horizon time.Time // now plus source.FutureBound: no position moves past it
	// regardless: every change is applied whatever the position says of
	// it (passed, or covered by one applied ahead), which it still moves
	// or marks: a Resource List's differences, which the catalog lacks.
	regardless bool
	retry      retrier // failHold: counts failures, gives up
	mirrors    func([]resourcesync.Link)
	log        *slog.Logger // failSkip's warnings
	what       string       // what the changes are, e.g. "a Resource List difference"
	next       string       // failSkip's warning: what becomes of a change skipped
	// skipped, when set, is told of each step failSkip leaves out, for
	// the status: a change is never skipped in silence.
	skipped func(s *step, err error)
}

// applied is what apply did.
type applied struct {
	effects []catalog.Effect
	changes int  // steps applied to the catalog (or given up)
	passed  int  // steps the position moved past or marked, less those applied ahead before
	failed  bool // a step was held or skipped
}

// apply makes each step, in order, by a's policies. Under failAbort it
// stops at the first step that fails and returns its error (wrapped with
// its URI) with what was applied before it.
func (a *applier) apply(steps []step) (applied, error) {
	var out applied
	blocked := false // posAdvance: a change is held; the position stays before it
	for i := range steps {
		s := &steps[i]
		c := s.c
		consult := c != nil && a.pos != nil && a.move != posNone && !a.regardless
		if consult && a.pos.passed(c) && !c.doubt {
			continue
		}
		ahead := consult && a.pos.appliedAhead(c, a.horizon)
		if !s.covered && !ahead {
			eff, err := a.one(s)
			if err != nil {
				var gaveUp bool
				switch a.fail {
				case failAbort:
					return out, fmt.Errorf("%s: %w", s.uri, err)
				case failSkip:
					a.log.Warn(a.what+" not applied; "+a.next, "uri", s.uri, "err", err)
					if a.skipped != nil {
						a.skipped(s, err)
					}
					out.failed = true
					continue
				default:
					if eff, gaveUp = a.retry.giveUp(c, a.set, err); !gaveUp {
						blocked, out.failed = true, true
						continue
					}
				}
			}
			out.effects = append(out.effects, eff...)
			out.changes++
		}
		if !ahead {
			out.passed++
		}
		a.step(c, blocked)
	}
	return out, nil
}

// one makes a step on the catalog.
func (a *applier) one(s *step) ([]catalog.Effect, error) {
	if a.cat == nil {
		return nil, nil
	}
	if s.err != nil {
		return nil, s.err
	}
	if s.res == nil {
		return a.cat.Remove(s.uri), nil
	}
	if a.mirrors != nil {
		a.mirrors(s.res.Links)
	}
	eff, err := a.cat.TryUpsert(s.res)
	if err != nil {
		return nil, fmt.Errorf("the catalog has no room for it: %w", err)
	}
	if a.retry != nil && s.c != nil {
		a.retry.appliedOnce(s.c)
	}
	return eff, nil
}

// step moves the position past c (applied or covered) by the position
// policy; blocked: a change before it is held.
func (a *applier) step(c *change, blocked bool) {
	if c == nil || a.pos == nil || a.move == posNone {
		return
	}
	if a.mu != nil {
		a.mu.Lock()
		defer a.mu.Unlock()
	}
	switch {
	case a.move == posAhead:
		if !c.at.Before(a.pos.Time) { // one behind it, the position passed
			a.pos.markAhead(c)
		}
	case blocked && !c.at.After(a.horizon):
		// applied, but the position stays before the failed change
	default:
		a.pos.advance(c, a.horizon)
	}
}

// changeSteps are the steps of an apply plan: in time order, each change
// but the last to its URI covered; its resource as the change and its
// HEAD (lengths) say. unknownLength: a length neither published nor
// learned is left unknown (the file system learns it at lookup), where
// the follower holds the change.
func changeSteps(p *applyPlan, lengths map[int]learned, set uint16, unknownLength bool) []step {
	steps := make([]step, len(p.changes))
	for i := range p.changes {
		c := &p.changes[i]
		s := step{c: c, uri: c.entry.Loc, covered: !p.wins(i)}
		if !s.covered && !deletes(c.entry, lengths[i]) {
			s.res, s.err = resourceOf(c, set, lengths[i])
			if s.err != nil && unknownLength && !unsaid(c.entry) {
				s.err = nil // resourceOf left it unknown
			}
		}
		steps[i] = s
	}
	return steps
}

// applyHow is how a Follower applies a batch of changes: the applier's
// policies, and what the changes are (and what becomes of one skipped),
// for its log.
type applyHow struct {
	move       posPolicy
	fail       failPolicy
	regardless bool
	what, next string
}

// The Follower's ways of applying changes.
var (
	// polled: a poll that read every document.
	polled = applyHow{move: posAdvance, fail: failHold, what: "a polled change"}
	// pushed: a push, or a poll that could not read every document.
	pushed = applyHow{move: posAhead, fail: failHold, what: "a pushed change"}
	// listed: a Resource List's differences from the catalog, after a
	// Framework Notification named it.
	listed = applyHow{move: posAhead, fail: failSkip, regardless: true,
		what: "a Resource List difference", next: "the polls will carry it"}
)

// applyChanges applies changes to f's catalog and set's position: those
// behind the position dropped (but doubts), in datetime order, each once;
// of several changes to one resource the last wins. Lengths are learned
// first, with no lock held; applyMu is held while they are applied. A poll
// that read every document advances the position (posAdvance; never past a
// change held, retried at the next poll, nor past now plus
// source.FutureBound); a push, a poll that could not, and Resource List
// differences mark their changes ahead of it (posAhead). It reports whether
// a change failed.
func (f *Follower) applyChanges(ctx context.Context, set *source.Set, changes []change, how applyHow) (failed bool) {
	if len(changes) == 0 {
		return false
	}
	horizon := f.now().Add(source.FutureBound)
	f.mu.Lock()
	pos := f.positionOf(set)
	plan := planApply(changes, func(c *change) bool { return !how.regardless && !c.doubt && pos.passed(c) })
	f.mu.Unlock()
	lengths := plan.learnLengths(ctx, f.s.Client())
	steps := changeSteps(plan, lengths, f.s.SetNumber(set), false)

	f.applyMu.Lock()
	f.mu.Lock()
	pos = f.positionOf(set) // a reload may have replaced it; written only under applyMu (and mu, for readers)
	f.mu.Unlock()
	a := &applier{cat: f.cat, set: f.s.SetNumber(set), fail: how.fail, move: how.move, pos: pos, mu: &f.mu,
		horizon: horizon, regardless: how.regardless, retry: f, mirrors: f.s.AllowMirrors, log: f.s.Logger(),
		what: how.what, next: how.next, skipped: func(s *step, err error) { f.noteSkipped(set, s.c.doc, s.uri, err, how.next) }}
	done, _ := a.apply(steps) // failHold and failSkip never fail it
	f.mu.Lock()
	f.applied += int64(done.passed)
	f.mu.Unlock()
	f.applyMu.Unlock()

	if len(done.effects) > 0 && f.effects != nil {
		f.effects(done.effects)
	}
	f.s.Logger().Info("changes applied", "set", f.s.SetKey(set), "changes", done.changes, "effects", len(done.effects),
		"pushed", how.move == posAhead, "of", how.what)
	return done.failed
}

// positionOf returns set's position, made from its Resource Lists' time
// for a set the Source Description added, before its reload. The caller
// holds mu.
func (f *Follower) positionOf(set *source.Set) *Position {
	p, ok := f.positions[set]
	if !ok {
		p = &Position{Time: set.ListedAt}
		f.positions[set] = p
	}
	return p
}

// appliedOnce forgets a change's failures: it applied (retrier).
func (f *Follower) appliedOnce(c *change) {
	f.mu.Lock()
	delete(f.failures, c.key)
	f.mu.Unlock()
}

// giveUp counts a failed change and reports whether it has failed too
// often to hold the position any longer (retrier). A given-up update keeps
// the file at its old length with the new version's time and hashes, so
// reading it fails (EIO, "changed since it was listed" in the log) rather
// than serve bytes the Source no longer publishes; the effects of marking
// it are returned, for the kernel to be told the file's version changed.
func (f *Follower) giveUp(c *change, set uint16, err error) ([]catalog.Effect, bool) {
	f.mu.Lock()
	f.failures[c.key]++
	n := f.failures[c.key]
	f.mu.Unlock()
	e := c.entry
	if n < maxAttempts {
		f.s.Logger().Warn("change not applied; retried at the next poll", "uri", e.Loc, "change", e.MD.Change,
			"document", c.doc, "attempt", n, "err", err)
		return nil, false
	}
	f.s.Logger().Error("change given up: it failed at every poll; its file reads EIO until the Source lists it again",
		"uri", e.Loc, "change", e.MD.Change, "document", c.doc, "attempts", n, "err", err)
	f.appliedOnce(c)
	id, ok := f.cat.ByURI(e.Loc)
	if !ok {
		return nil, true
	}
	old, ok := f.cat.Resource(id)
	if !ok {
		return nil, true
	}
	res := source.ResourceOf(e, c.at)
	res.Length, res.Set = old.Length, set
	eff, err := f.cat.TryUpsert(res)
	if err != nil {
		f.s.Logger().Error("a given-up change could not even be marked; its file may serve its old version", "uri", e.Loc, "err", err)
	}
	return eff, true
}
