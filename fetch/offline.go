package fetch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Offline is a state of an origin, not a stall. Once attempts at an origin
// have failed without an answer (refused, reset, no response within
// Timeout) over at least one Timeout, with no answer between, the origin
// is offline: a request that is not a probe fails at once with an
// *OfflineError instead of waiting through its retries, and one that
// starts while the origin answers waits for it at most
// Options.OfflineWait. Probes (Probe: the polls, the discovery and the
// catch-up of a mount) still go, one attempt each while the origin is
// offline, and the first answer of any request ends the state.
//
// The state is kept only when Options.OfflineWait is set: the one-shot
// commands (inspect, audit) retry as they always did.

// ErrOffline: the request's origin is offline. Use errors.As with
// *OfflineError for since when.
var ErrOffline = errors.New("fetch: the Source is offline")

// OfflineError is a request that was not sent, or not retried, because its
// origin is offline.
type OfflineError struct {
	Origin string
	Since  time.Time // the first of the failed attempts in a row
	Hang   bool      // the last attempt connected and had no answer within Timeout
	Last   error     // the last attempt's failure, if this request made one
	Forced bool      // Options.Offline: nothing is sent
	// ForcedAs is what Forced is called (Advice.Offline).
	ForcedAs string
}

func (e *OfflineError) Error() string {
	s := fmt.Sprintf("%s offline since %s", e.Origin, e.Since.UTC().Format(time.RFC3339))
	if e.Forced {
		s += " (" + e.ForcedAs + ")"
	}
	if e.Last != nil {
		s += ": " + e.Last.Error()
	}
	return s
}

func (e *OfflineError) Is(target error) bool { return target == ErrOffline }
func (e *OfflineError) Unwrap() error        { return e.Last }

// OfflineState is what a Client knows of its credential origin (the
// Source's): whether it is offline, since when, and why.
type OfflineState struct {
	Offline bool
	// Since is the first failed attempt of the run of failures, offline or
	// not yet; zero when the last attempt was answered.
	Since time.Time
	// Hang: the last failure was a connection that was accepted and never
	// answered within Timeout (a hung server, or a proxy holding
	// connections), not a refusal.
	Hang bool
	Err  string // the last failure
}

type probeKey struct{}

// Probe marks ctx's requests as probes of the Source: they are sent while
// it is offline (one attempt each), and not bounded by OfflineWait.
func Probe(ctx context.Context) context.Context { return context.WithValue(ctx, probeKey{}, true) }

func isProbe(ctx context.Context) bool { v, _ := ctx.Value(probeKey{}).(bool); return v }

type patientKey struct{}

// Patient marks ctx's requests as ones a user waits for, as `rsfs mount`
// loading the Source before the mount is ready: they go through their
// retries whatever the origin's state (saying at each what they wait
// for), and are not bounded by OfflineWait. Their failures still count
// towards the state, which the mount has once it is ready.
func Patient(ctx context.Context) context.Context {
	return context.WithValue(ctx, patientKey{}, true)
}

func isPatient(ctx context.Context) bool { v, _ := ctx.Value(patientKey{}).(bool); return v }

// health is one origin's run of failed attempts.
type health struct {
	mu       sync.Mutex
	since    time.Time // when the first failed attempt of the run was sent; zero: answering
	lastFail time.Time // when the last failed attempt ended
	hang     bool
	err      error
}

// healths are the origins' health, made on first use.
type healths struct {
	mu sync.Mutex
	m  map[string]*health
}

func (hs *healths) of(origin string) *health {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.m == nil {
		hs.m = make(map[string]*health)
	}
	h := hs.m[origin]
	if h == nil {
		h = &health{}
		hs.m[origin] = h
	}
	return h
}

// failed records an attempt sent at sent that ended now without an answer.
func (h *health) failed(sent time.Time, hang bool, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.since.IsZero() {
		h.since = sent
	}
	h.lastFail, h.hang, h.err = time.Now(), hang, err
}

// answered records an answer: the origin is online.
func (h *health) answered() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.since, h.hang, h.err = time.Time{}, false, nil
}

// failing reports whether the last attempt got no answer.
func (h *health) failing() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.since.IsZero()
}

// offline reports whether the failures in a row span timeout at least.
func (h *health) offline(timeout time.Duration) (*OfflineError, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.offlineLocked(timeout) {
		return nil, false
	}
	return &OfflineError{Since: h.since, Hang: h.hang}, true
}

// probedWithin reports whether an attempt failed less than d ago.
func (h *health) probedWithin(d time.Duration) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return time.Since(h.lastFail) < d
}

func (h *health) state(timeout time.Duration) OfflineState {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := OfflineState{Since: h.since, Hang: h.hang}
	if h.err != nil {
		st.Err = h.err.Error()
	}
	st.Offline = h.offlineLocked(timeout)
	return st
}

// offlineLocked: the failures in a row span timeout at least. h.mu held.
func (h *health) offlineLocked(timeout time.Duration) bool {
	return !h.since.IsZero() && h.lastFail.Sub(h.since) >= timeout
}

// tracking reports whether the Client keeps the offline state.
func (c *Client) tracking() bool { return c.opts.OfflineWait > 0 }

// Offline is the state of the Client's credential origin (zero when the
// Client keeps none: Options.OfflineWait unset).
func (c *Client) Offline() OfflineState {
	if c.opts.Offline {
		return OfflineState{Offline: true, Since: c.created, Err: c.opts.Advice.offline() + ": the Source is not asked"}
	}
	if !c.tracking() || c.opts.CredentialOrigin == "" {
		return OfflineState{}
	}
	return c.health.of(c.opts.CredentialOrigin).state(c.opts.Timeout)
}

// offlineErr is the error of a request to origin that must not wait: nil
// while the origin is not offline. A probe goes, unless an attempt failed
// less than one Timeout ago: an offline origin is probed once a Timeout
// at most, and a poll of many documents waits for one of them.
func (c *Client) offlineErr(ctx context.Context, origin string, last error) error {
	if c.opts.Offline {
		return &OfflineError{Origin: origin, Since: c.created, Forced: true, ForcedAs: c.opts.Advice.offline()}
	}
	if !c.tracking() || isPatient(ctx) {
		return nil
	}
	h := c.health.of(origin)
	e, ok := h.offline(c.opts.Timeout)
	if !ok || isProbe(ctx) && last == nil && !h.probedWithin(c.opts.Timeout) {
		return nil
	}
	e.Origin, e.Last = origin, last
	return e
}

// readDeadline is when a request that is not a probe, started at start,
// stops waiting for an origin that does not answer; zero: never.
func (c *Client) readDeadline(ctx context.Context, start time.Time) time.Time {
	if !c.tracking() || isProbe(ctx) || isPatient(ctx) {
		return time.Time{}
	}
	return start.Add(c.opts.OfflineWait)
}

type deadlineKey struct{}

// withWaitDeadline bounds the waits of ctx's attempts (for a turn, for the
// response headers) by d; zero: no bound beyond Options.Timeout.
func withWaitDeadline(ctx context.Context, d time.Time) context.Context {
	if d.IsZero() {
		return ctx
	}
	return context.WithValue(ctx, deadlineKey{}, d)
}

// headerWait is how long an attempt of ctx waits for its response headers.
func (c *Client) headerWait(ctx context.Context) time.Duration {
	d, ok := ctx.Value(deadlineKey{}).(time.Time)
	if !ok {
		return c.opts.Timeout
	}
	return max(min(c.opts.Timeout, time.Until(d)), 50*time.Millisecond)
}

// noAnswer reports whether err is an attempt that got no answer from the
// origin (as opposed to an answer it did not like, or a caller that gave
// up).
func noAnswer(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() == nil && transient(err)
}
