package sourcetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"rsfs/resourcesync"
)

// Source is a running generated ResourceSync Source.
type Source struct {
	cfg   Config
	names genNames

	base       string // http://127.0.0.1:PORT/
	localBase  string // http://localhost:PORT/ (the other host form)
	addr       string // the primary server's listen address, 127.0.0.1:PORT
	mirrorBase string // http://127.0.0.1:PORT2/ or ""

	startAt     time.Time // documents' from= and the initial at=
	fingerprint string    // identifies config and start in document ETags

	mu        sync.RWMutex
	sets      []*resourceSet
	overrides map[int]*resState    // changed generated resources
	explicit  map[string]*resState // awkward and created resources, by key
	dotted    map[string]*resState // explicit resources with dot segments, by resolved key
	live      int
	lastTime  time.Time // the newest change time handed out
	seq       int64     // change sequence number
	awkward   []string

	hashes *hashCache
	docs   *docCache
	delay  atomic.Int64
	count  counters

	dumps [][]dumpPackage // per set, built at Start when cfg.Dumps

	servers []*http.Server
	wg      sync.WaitGroup
}

// resourceSet is one Capability List's share of the resources: generated
// indices [lo, hi) followed by its explicit resources in creation order.
type resourceSet struct {
	lo, hi   int
	explicit []*resState
	changes  []change
	seq      int64     // bumped by every change in the set
	at       time.Time // time of the state the lists show
	index    bool      // publish a Resource List Index
}

func (rs *resourceSet) slots() int { return rs.hi - rs.lo + len(rs.explicit) }

// change is one Change List entry.
type change struct {
	uri     string
	kind    resourcesync.Change
	at      time.Time
	size    int64
	digests []byte
	typ     string
}

// Start generates the Source and serves it on 127.0.0.1 (and a mirror
// server when cfg.Mirror). Call Close when done.
func Start(cfg Config) (*Source, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	s := &Source{
		cfg: cfg, names: newGenNames(cfg.Resources, cfg.FanOut), startAt: now, lastTime: now,
		overrides: map[int]*resState{}, explicit: map[string]*resState{}, dotted: map[string]*resState{},
		hashes: newHashCache(cfg.Hashes, cfg.Resources), docs: newDocCache(cmp.Or(cfg.DocCacheBytes, 64<<20)),
		live: cfg.Resources,
	}
	s.fingerprint = fingerprint(cfg, now)
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("sourcetest: listen on %s: %w", cfg.Addr, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	s.base = "http://" + ln.Addr().String() + "/"
	if cfg.Host != "" {
		s.base = fmt.Sprintf("http://%s/", net.JoinHostPort(cfg.Host, strconv.Itoa(port)))
	}
	if cfg.Base != "" {
		s.base = strings.TrimSuffix(cfg.Base, "/") + "/"
	}
	s.addr = ln.Addr().String()
	s.localBase = fmt.Sprintf("http://localhost:%d/", port)
	var mln net.Listener
	if cfg.Mirror {
		if mln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			ln.Close()
			return nil, fmt.Errorf("sourcetest: listen for the mirror: %w", err)
		}
		s.mirrorBase = "http://" + mln.Addr().String() + "/"
	}
	s.makeSets()
	if cfg.Awkward {
		s.addAwkward()
	}
	if cfg.Dumps {
		if err := s.buildDumps(); err != nil {
			ln.Close()
			if mln != nil {
				mln.Close()
			}
			return nil, err
		}
	}
	s.serve(ln, http.HandlerFunc(s.servePrimary))
	if mln != nil {
		s.serve(mln, http.HandlerFunc(s.serveMirror))
	}
	return s, nil
}

func fingerprint(cfg Config, start time.Time) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%d|%d|%d|%d|%d|%v|%v|%v|%v|%v|%d|%d", cfg.Resources, cfg.MinSize, cfg.MaxSize,
		cfg.Seed, cfg.PerList, cfg.Layout, cfg.OmitLength, cfg.Awkward, cfg.Mirror, cfg.Hashes,
		cfg.Gzip, cfg.ResourceSets, start.UnixNano())
	return fmt.Sprintf("%x", h.Sum64())
}

func (s *Source) makeSets() {
	n, k := s.cfg.Resources, s.cfg.ResourceSets
	for i := range k {
		rs := &resourceSet{lo: i * n / k, hi: (i + 1) * n / k, at: s.startAt}
		rs.index = rs.hi-rs.lo > s.cfg.PerList
		s.sets = append(s.sets, rs)
	}
}

func (s *Source) serve(ln net.Listener, h http.Handler) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	s.servers = append(s.servers, srv)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("sourcetest: serve", "addr", ln.Addr().String(), "err", err)
		}
	}()
}

// Close stops the servers; it waits at most five seconds for open
// responses, then cuts them.
func (s *Source) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range s.servers {
		if err := srv.Shutdown(ctx); err != nil {
			srv.Close()
		}
	}
	s.wg.Wait()
}

// URL returns the primary server's base URL, "http://127.0.0.1:PORT/" (with
// Config.Host, "http://HOST:PORT/"; with Config.Base, Base).
func (s *Source) URL() string { return s.base }

// Addr returns the primary server's listen address, "127.0.0.1:PORT",
// which a reverse proxy at Config.Base forwards to.
func (s *Source) Addr() string { return s.addr }

// MirrorURL returns the mirror server's base URL, or "" without a mirror.
// Resources are served under MirrorURL()+"mirror/...".
func (s *Source) MirrorURL() string { return s.mirrorBase }

// Config returns the configuration in effect, defaults filled in.
func (s *Source) Config() Config { return s.cfg }

// uriToKey maps a published URI to its key.
func (s *Source) uriToKey(uri string) (string, bool) {
	for _, b := range []string{s.base, s.localBase} {
		if rest, ok := strings.CutPrefix(uri, b); ok {
			return canonicalKey("/" + rest), true
		}
	}
	return "", false
}

// setOf returns the set of generated resource i.
func (s *Source) setOf(i int) int {
	for k, rs := range s.sets {
		if i < rs.hi {
			return k
		}
	}
	return len(s.sets) - 1
}

// lookupLocked returns the record of key (deleted ones included); for an
// unchanged generated resource it returns a transient record without
// digests. A key is matched exactly first; failing that, with its dot
// segments resolved, as a client that normalizes URIs would send it. Call
// with s.mu held.
func (s *Source) lookupLocked(key string) (*resState, bool) {
	if r, ok := s.exactLocked(key); ok {
		return r, true
	}
	resolved := removeDotSegments(key)
	if r, ok := s.dotted[resolved]; ok {
		return r, true
	}
	if resolved != key {
		return s.exactLocked(resolved)
	}
	return nil, false
}

func (s *Source) exactLocked(key string) (*resState, bool) {
	if r, ok := s.explicit[key]; ok {
		return r, true
	}
	i, ok := s.names.parse(key)
	if !ok || i >= s.cfg.Resources {
		return nil, false
	}
	return s.generatedLocked(i), true
}

// addExplicitLocked registers a new explicit resource in set k.
func (s *Source) addExplicitLocked(r *resState, k int) {
	r.set = k
	s.explicit[r.key] = r
	if resolved := removeDotSegments(r.key); resolved != r.key {
		if _, taken := s.exactLocked(resolved); !taken {
			s.dotted[resolved] = r
		}
	}
	s.sets[k].explicit = append(s.sets[k].explicit, r)
}

// generatedLocked returns the record of generated resource i.
func (s *Source) generatedLocked(i int) *resState {
	if r, ok := s.overrides[i]; ok {
		return r
	}
	key := s.names.key(i)
	bk := bodyKey(s.cfg.Seed, i, 0)
	return &resState{
		key: key, uri: s.base + key[1:], set: s.setOf(i), gen: i,
		size: generatedSize(bk, s.cfg.MinSize, s.cfg.MaxSize), lastmod: genLastmod(s.cfg.Seed, i),
		etag: genETag(s.cfg.Seed, i, 0), typ: textType,
	}
}

// withDigests fills in the digests of a transient generated record, from
// the cache or by generating its body. Call without s.mu held.
func (s *Source) withDigests(r *resState) *resState {
	if r.digests != nil {
		return r
	}
	d, ok := s.hashes.get(r.gen)
	if !ok {
		d = genDigests(s.cfg.Hashes, r.generatedBody(s.cfg.Seed))
		s.hashes.put(r.gen, d)
	}
	r.digests = d
	return r
}

// slotLocked returns the record in slot j of set k.
func (s *Source) slotLocked(k, j int) *resState {
	rs := s.sets[k]
	if j < rs.hi-rs.lo {
		return s.generatedLocked(rs.lo + j)
	}
	return rs.explicit[j-(rs.hi-rs.lo)]
}

// slotsLocked returns copies of the records in slots [from, to) of set k,
// deleted ones included.
func (s *Source) slotsLocked(k, from, to int) []resState {
	out := make([]resState, 0, to-from)
	for j := from; j < to; j++ {
		out = append(out, *s.slotLocked(k, j))
	}
	return out
}
