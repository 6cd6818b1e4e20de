package fetch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/priority"
)

// limitReq is nginx's limit_req, as ngx_http_limit_req_module.c computes
// it for one key: excess, in thousandths of a request, drains at rate per
// second; a request that would take it past burst is refused (status) and
// leaves the state alone; with nodelay an accepted one is served at once.
type limitReq struct {
	rate, burst int64 // requests a second; requests
	status      int

	mu        sync.Mutex
	excess    int64 // thousandths
	last      time.Time
	accepted  int64
	refused   int64
	arrivals  []time.Time
	refusedAt []time.Time
}

func (l *limitReq) admit(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.arrivals = append(l.arrivals, now)
	ms := int64(0)
	if !l.last.IsZero() {
		ms = now.Sub(l.last).Milliseconds()
	}
	excess := l.excess - l.rate*1000*ms/1000 + 1000
	if excess < 0 {
		excess = 0
	}
	if l.last.IsZero() {
		excess = 0
	}
	if excess > l.burst*1000 {
		l.refused++
		l.refusedAt = append(l.refusedAt, now)
		return false
	}
	l.excess, l.last = excess, now
	l.accepted++
	return true
}

func (l *limitReq) handler(body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !l.admit(time.Now()) {
			http.Error(w, "slow down", l.status)
			return
		}
		_, _ = w.Write(body)
	})
}

// fetchAll gets n URLs with workers at once, as a file system's readers
// and prefetchers do, and returns how many failed.
func fetchAll(t *testing.T, c *Client, base string, n, workers int) int {
	t.Helper()
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				resp, err := c.Get(testContext(t), fmt.Sprintf("%s/f%d", base, i), nil)
				if err != nil {
					failed.Add(1)
					continue
				}
				readAll(t, resp.Body)
			}
		}()
	}
	wg.Wait()
	return int(failed.Load())
}

// pacedOptions are the Options of a client behind a limiter: today's
// retries and backoffs.
func pacedOptions() Options {
	return Options{Timeout: 5 * time.Second, Logger: slog.New(slog.DiscardHandler)}
}

// TestPacingBehindLimitReq: behind nginx's limit_req answering 429 (or its
// default 503), eight readers at once get every one of their files,
// the server refuses at most 5 % of what it is sent, and the whole takes
// little more than the limit allows.
func TestPacingBehindLimitReq(t *testing.T) {
	for _, tc := range []struct {
		rate, n int
		status  int
	}{
		{rate: 200, n: 600, status: http.StatusTooManyRequests},
		{rate: 200, n: 600, status: http.StatusServiceUnavailable},
	} {
		t.Run(fmt.Sprintf("%d_%d", tc.rate, tc.status), func(t *testing.T) {
			lim := &limitReq{rate: int64(tc.rate), burst: int64(tc.rate / 2), status: tc.status}
			srv, _ := newServer(t, lim.handler([]byte("some bytes\n")))
			c := newTestClient(t, pacedOptions(), srv)
			start := time.Now()
			// Finding the limit costs the requests in flight when the
			// first refusal comes: at most the readers, 8 of 600.
			failed := fetchAll(t, c, srv.URL, tc.n, 8)
			took := time.Since(start)
			sent := lim.accepted + lim.refused
			t.Logf("%d r/s, %d: %d requests, %d refused (%.1f %%), %v (%.2f × n/rate)", tc.rate, tc.status, sent,
				lim.refused, 100*float64(lim.refused)/float64(sent), took.Round(time.Millisecond),
				took.Seconds()/(float64(tc.n)/float64(tc.rate)))
			assert.Zero(t, failed, "requests failed")
			assert.LessOrEqual(t, float64(lim.refused), 0.05*float64(sent), "refused more than 5 %")
			st := pacingOf(c, srv.URL)
			assert.Positive(t, st.Rate, "the origin is paced")
			assert.Equal(t, lim.refused, st.Counts[tc.status], "every refusal counted")
		})
	}
}

func pacingOf(c *Client, rawURL string) PaceStatus {
	for _, st := range c.Pacing() {
		if st.Origin == originOf(rawURL) {
			return st
		}
	}
	return PaceStatus{}
}

// TestPauseIsOriginWide: one 429 with Retry-After holds back every request
// to its origin, not only its own retry, and no other origin.
func TestPauseIsOriginWide(t *testing.T) {
	var first atomic.Bool
	var mu sync.Mutex
	var refusedAt time.Time
	var after []time.Time
	srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		if r.URL.Path == "/first" && first.CompareAndSwap(false, true) {
			mu.Lock()
			refusedAt = now
			mu.Unlock()
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		mu.Lock()
		after = append(after, now)
		mu.Unlock()
		_, _ = w.Write([]byte("ok"))
	}))
	other, _ := newServer(t, serveBytes(`"o"`, []byte("other")))
	c := newTestClient(t, pacedOptions(), srv)
	c.AllowOrigin(other.URL)

	firstDone := make(chan error, 1)
	go func() {
		resp, err := c.Get(testContext(t), srv.URL+"/first", nil)
		if err == nil {
			_ = resp.Body.Close()
		}
		firstDone <- err
	}()
	// The pause starts when the client hears the 429, not when the server
	// sends it: wait for the pacer to say so.
	var paused time.Time
	require.Eventually(t, func() bool {
		paused = pacingOf(c, srv.URL).Paused
		return !paused.IsZero()
	}, 5*time.Second, time.Millisecond, "the 429 paused no one")
	mu.Lock()
	assert.GreaterOrEqual(t, paused.Sub(refusedAt), 950*time.Millisecond, "the pause is the Retry-After")
	mu.Unlock()

	// Issued while the origin is paused, besides the refused request's own
	// retry: they wait, and go after.
	start := time.Now()
	resp, err := c.Get(testContext(t), other.URL+"/x", nil)
	require.NoError(t, err)
	readAll(t, resp.Body)
	assert.Less(t, time.Since(start), 500*time.Millisecond, "another origin is not paused")
	require.Zero(t, fetchAll(t, c, srv.URL, 8, 4))
	require.NoError(t, <-firstDone)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, after)
	sort.Slice(after, func(i, j int) bool { return after[i].Before(after[j]) })
	assert.False(t, after[0].Before(paused), "a request reached the origin %v before its pause ended",
		paused.Sub(after[0]))
}

// TestPersistentRefusalSlowsToAFewRequests: an origin that refuses
// everything gets few requests while it does (the pauses grow, the rate
// falls to its floor), each read fails once after its retries naming
// --max-rate, and reads after it recovers all succeed.
func TestPersistentRefusalSlowsToAFewRequests(t *testing.T) {
	var refusing atomic.Bool
	refusing.Store(true)
	var requests atomic.Int64
	srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if refusing.Load() {
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	opts := pacedOptions()
	opts.Advice.SlowDown = "--max-rate sets a lower request rate"
	opts.Retries = 2
	opts.BackoffBase, opts.BackoffMax = 50*time.Millisecond, 400*time.Millisecond
	c := newTestClient(t, opts, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	var errs [2]error
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = c.Get(ctx, fmt.Sprintf("%s/f%d", srv.URL, i), nil)
		}()
	}
	wg.Wait()
	window := time.Since(start)
	for i, err := range errs {
		var se *StatusError
		require.True(t, errors.As(err, &se), "read %d: %v", i, err)
		assert.Equal(t, http.StatusTooManyRequests, se.Code)
		assert.Contains(t, err.Error(), "--max-rate")
	}
	// 2 reads of 3 attempts each: no more, and paced: never faster than
	// the floor allows once the first answers came.
	sent := requests.Load()
	t.Logf("%d requests in %v", sent, window)
	assert.Equal(t, int64(2*3), sent)
	// The first two went at once; of the four after the first cut, the
	// first may find a token, the other three wait for theirs.
	assert.GreaterOrEqual(t, window.Seconds(), float64(sent-3)/MinPacedRate-0.1, "requests faster than the floor rate")
	st := pacingOf(c, srv.URL)
	assert.Equal(t, 1, st.Limit, "in-flight limit cut to one")
	assert.Equal(t, MinPacedRate, st.Rate, "rate cut to its floor")

	refusing.Store(false)
	require.Zero(t, fetchAll(t, c, srv.URL, 8, 4), "reads after recovery")
}

// TestUrgentGoesFirst: while an origin is paced, a request someone waits
// for overtakes deferrable ones queued before it.
func TestUrgentGoesFirst(t *testing.T) {
	var mu sync.Mutex
	var order []string
	srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		order = append(order, r.URL.Path)
		mu.Unlock()
		_, _ = w.Write([]byte("ok"))
	}))
	opts := pacedOptions()
	opts.MaxRate = 2 // a token every 510 ms: time to queue them all first
	c := newTestClient(t, opts, srv)
	resp, err := c.Get(testContext(t), srv.URL+"/first", nil) // takes the token
	require.NoError(t, err)
	readAll(t, resp.Body)

	var wg sync.WaitGroup
	get := func(ctx context.Context, path string) {
		defer wg.Done()
		resp, err := c.Get(ctx, srv.URL+path, nil)
		if assert.NoError(t, err) {
			readAll(t, resp.Body)
		}
	}
	waiting := func(n int) func() bool {
		return func() bool { return pacingOf(c, srv.URL).Waiting == n }
	}
	for i := range 4 {
		wg.Add(1)
		go get(priority.Deferrable(testContext(t), nil), "/prefetch"+strconv.Itoa(i))
	}
	require.Eventually(t, waiting(4), 200*time.Millisecond, time.Millisecond, "queued behind the token")
	wg.Add(1)
	go get(testContext(t), "/read")
	require.Eventually(t, waiting(5), 200*time.Millisecond, time.Millisecond)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, order, 6)
	assert.Equal(t, "/read", order[1], "the read waited behind prefetches: %v", order)
}

// TestMaxRateSpacesRequests: --max-rate N sends no more than N requests to
// an origin in any second, counted where they arrive.
func TestMaxRateSpacesRequests(t *testing.T) {
	var mu sync.Mutex
	var arrivals []time.Time
	srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrivals = append(arrivals, time.Now())
		mu.Unlock()
		_, _ = w.Write([]byte("ok"))
	}))
	opts := pacedOptions()
	opts.MaxRate = 25
	c := newTestClient(t, opts, srv)
	require.Zero(t, fetchAll(t, c, srv.URL, 60, 8))
	mu.Lock()
	defer mu.Unlock()
	// Over 975 ms, not a whole second: 26 arrivals exactly 40 ms apart span
	// one second, and the server stamps them as its goroutines run.
	assert.LessOrEqual(t, maxInWindow(arrivals, 975*time.Millisecond), 25)
}

// maxInWindow is the most times in any window [t, t+w) starting at one.
func maxInWindow(times []time.Time, w time.Duration) int {
	sorted := append([]time.Time(nil), times...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Before(sorted[j]) })
	best, j := 0, 0
	for i := range sorted {
		for j < len(sorted) && sorted[j].Sub(sorted[i]) < w {
			j++
		}
		best = max(best, j-i)
	}
	return best
}

// TestBandwidthLimit: the bytes a second read across the client stay
// under BandwidthLimit.
func TestBandwidthLimit(t *testing.T) {
	data := testContent(600 << 10)
	srv, _ := newServer(t, serveBytes(`"b"`, data))
	opts := pacedOptions()
	opts.BandwidthLimit = 1 << 20
	c := newTestClient(t, opts, srv)
	start := time.Now()
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.Get(testContext(t), srv.URL+"/b", nil)
			if assert.NoError(t, err) {
				assert.Equal(t, data, readAll(t, resp.Body))
			}
		}()
	}
	wg.Wait()
	// 1.2 MiB at 1 MiB/s with a bucket of a tenth of a second: 1.1 s at least.
	assert.GreaterOrEqual(t, time.Since(start), 1050*time.Millisecond)
}

// TestControlLaw follows one origin's pacer through the rules, on a clock
// of its own: the first cut from what the origin accepted, no second cut
// for a request sent before it, the threshold of the second, growth by
// phase, the floor, and the threshold forgotten after a quiet minute.
func TestControlLaw(t *testing.T) {
	p := newPacer("http://s", paceOptions{backoffBase: 200 * time.Millisecond, backoffMax: 5 * time.Second, maxRetryWait: 30 * time.Second},
		func() int { return 16 })
	t0 := time.Unix(1_000_000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	rate := func() float64 { return float64(p.adaptive.Limit()) }
	for i := range 100 { // 100 accepted in the last second, sent at once
		p.sent.add(at(time.Duration(i) * 10 * time.Millisecond))
		p.succeededLocked(at(time.Duration(i) * 10 * time.Millisecond))
	}
	require.False(t, p.paced, "successes alone never pace")

	p.throttledLocked(at(995*time.Millisecond), at(995*time.Millisecond), http.StatusTooManyRequests, 0)
	require.True(t, p.paced)
	assert.InDelta(t, 85, rate(), 0.01, "cut to 0.85 of what it accepted")
	assert.Equal(t, 8, p.limitLocked(), "in flight halved")
	assert.True(t, p.pause.After(at(995*time.Millisecond)), "the origin pauses")
	assert.Zero(t, p.ssthresh, "slow start after the first cut")

	p.throttledLocked(at(1100*time.Millisecond), at(990*time.Millisecond), http.StatusTooManyRequests, 0)
	assert.InDelta(t, 85, rate(), 0.01, "a request sent before the cut cuts nothing")

	p.succeededLocked(at(1200 * time.Millisecond))
	assert.InDelta(t, 86, rate(), 0.01, "slow start: +1 a success")

	p.throttledLocked(at(1300*time.Millisecond), at(1250*time.Millisecond), http.StatusServiceUnavailable, 2*time.Second)
	accepted := float64(p.accepted.count(at(1300*time.Millisecond), time.Second))
	assert.InDelta(t, 0.85*min(86, accepted), rate(), 0.01)
	assert.InDelta(t, rate(), p.ssthresh, 0.01, "the second cut sets the threshold")
	assert.Equal(t, at(3300*time.Millisecond), p.pause, "Retry-After pauses the origin")
	assert.Equal(t, 4, p.limitLocked())

	r := rate()
	p.succeededLocked(at(4 * time.Second))
	assert.InDelta(t, r+avoidGain, rate(), 1e-9, "above the threshold, below the ceiling: +0.05")
	p.adaptive.SetLimitAt(at(4*time.Second), rate2(p.ceiling+1))
	p.succeededLocked(at(4 * time.Second))
	assert.InDelta(t, p.ceiling+1+probeGain, rate(), 1e-9, "past the ceiling: +0.01")

	p.succeededLocked(at(70 * time.Second))
	assert.Zero(t, p.ssthresh, "a quiet minute forgets the threshold")
	r = rate()
	p.succeededLocked(at(70 * time.Second))
	assert.InDelta(t, r+slowStartGain, rate(), 1e-9)

	// Nothing accepted in the last second: the floor, and no threshold.
	p.throttledLocked(at(100*time.Second), at(100*time.Second), http.StatusTooManyRequests, 0)
	assert.Equal(t, MinPacedRate, rate())
	assert.Zero(t, p.ssthresh)
	assert.Equal(t, map[int]int64{429: 3, 503: 1}, p.counts)
}

func rate2(r float64) rate.Limit { return rate.Limit(r) }

// TestFirstWindow: a new origin's requests in flight open from the first
// window, one more per success, also once HTTP/2 raises the transport's
// limit after the first answers (not at once to 128 streams, which a
// limiter refusing past its burst would refuse nearly all of).
func TestFirstWindow(t *testing.T) {
	top := DefaultMaxConnsPerHost // HTTP/1.1 until the first answer says HTTP/2
	p := newPacer("http://s", paceOptions{}, func() int { return top })
	now := time.Unix(1_000_000, 0)
	assert.Equal(t, DefaultMaxConnsPerHost, p.limitLocked())
	for range 5 {
		p.succeededLocked(now)
	}
	top = MaxStreams
	assert.Equal(t, initialWindow, p.limitLocked(), "HTTP/2 learned: the first window, not 128 streams")
	for range 10 {
		p.succeededLocked(now)
	}
	assert.Equal(t, initialWindow+10, p.limitLocked(), "one more per success")
	for range 200 {
		p.succeededLocked(now)
	}
	assert.Equal(t, MaxStreams, p.limitLocked())
}
