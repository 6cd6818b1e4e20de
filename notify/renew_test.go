package notify

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The renewal schedule, without a clock: the tests against a hub can only
// bound it loosely on a shared machine.

func TestRenewAtFourFifthsOfTheLease(t *testing.T) {
	verified := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	for lease, want := range map[time.Duration]time.Duration{
		time.Second:        800 * time.Millisecond,
		10 * time.Hour:     8 * time.Hour,
		5 * 24 * time.Hour: 4 * 24 * time.Hour,
	} {
		sub := &subscription{verified: verified, lease: lease}
		assert.Equal(t, verified.Add(want), sub.renewAt(), "lease %s", lease)
	}
}

func TestBackoffDoublesToItsBoundWithJitter(t *testing.T) {
	// 1 s, doubling, at most 5 minutes (the defaults).
	var got []time.Duration
	var d time.Duration
	for range 11 {
		d = nextBackoff(d, DefaultRetryMin, DefaultRetryMax)
		got = append(got, d)
	}
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second,
		32 * time.Second, 64 * time.Second, 128 * time.Second, 256 * time.Second, 5 * time.Minute, 5 * time.Minute}, got)
	// Each wait is shortened by at most a quarter, and not always alike.
	seen := map[time.Duration]bool{}
	for range 100 {
		w := jitter(time.Second)
		assert.GreaterOrEqual(t, w, 750*time.Millisecond)
		assert.LessOrEqual(t, w, time.Second)
		seen[w] = true
	}
	assert.Greater(t, len(seen), 10, "jittered")
}

// freeAddr returns a loopback address nothing listens on (until a test
// starts something there).
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// waitState waits until the only subscription of s is in phase p.
func waitState(t *testing.T, s *Subscriber, p Phase) State {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		st := s.States()
		if len(st) == 1 && st[0].Phase == p {
			return st[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no subscription %s within %s: %+v", p, waitLimit, st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestKeepRetriesAHubThatIsDownUntilItIsUp(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	hubURL := "http://" + addr + "/hub"
	s, logs := startSubscriber(t, Options{RetryMin: 50 * time.Millisecond, RetryMax: 200 * time.Millisecond})
	start := time.Now()
	require.NoError(t, s.Keep(hubURL, changeTopic))
	st := waitState(t, s, Retrying)
	assert.Equal(t, hubURL, st.Hub)
	assert.Equal(t, changeTopic, st.Topic)
	require.Error(t, st.Err)
	assert.Contains(t, st.Err.Error(), "connection refused")
	assert.False(t, st.Next.Before(start), "a retry is due")
	assert.NoError(t, s.Keep(hubURL, changeTopic), "keeping it again is a no-op")
	assert.Len(t, s.States(), 1)

	// Several retries fail while the hub is down, each after a backoff
	// that doubles (50, 100, 200, 200 ms..., each shortened by at most a
	// quarter): the n-th failure comes no sooner than the waits after the
	// n-1 before it. A failure sets when the next request is due (Next),
	// and the next request starts no sooner, so the Next of failure j
	// comes at least the waits after failures i+1..j after that of failure
	// i. Both bounds hold however late the machine runs the retries.
	waits := func(n int) (d time.Duration) { // the least waits after failures 1..n
		for k, b := 1, 50*time.Millisecond; k <= n; k, b = k+1, min(2*b, 200*time.Millisecond) {
			d += b * 3 / 4
		}
		return d
	}
	next := map[int]time.Time{} // the last Next seen while retrying after that many failures
	deadline := time.Now().Add(waitLimit)
	for failures := 0; failures < 5; {
		require.True(t, time.Now().Before(deadline), "5 failed requests within %s: %+v", waitLimit, s.States())
		time.Sleep(2 * time.Millisecond)
		st := s.States()[0]
		failures = st.Failures
		if !assert.GreaterOrEqual(t, time.Since(start), waits(failures-1), "%d failures", failures) {
			break
		}
		if st.Phase == Retrying {
			next[st.Failures] = st.Next
		}
	}
	first, last := minKey(next), maxKey(next)
	assert.GreaterOrEqual(t, next[last].Sub(next[first]), waits(last)-waits(first), "retries %d to %d back off, doubling", first+1, last)
	hub := newTestHubAt(t, 3600, addr)
	up := time.Now()
	ev, ok := hub.next(waitLimit)
	require.True(t, ok)
	assert.True(t, ev.Verified)
	st = waitState(t, s, Subscribed)
	assert.NoError(t, st.Err)
	assert.Zero(t, st.Failures)
	assert.WithinDuration(t, ev.At.Add(48*time.Minute), st.Next, 5*time.Second, "renewed at 80% of the lease")
	// The backoff is at most 200 ms, jittered down: the hub is asked
	// again within it (the bound allows for a busy machine).
	assert.Less(t, ev.At.Sub(up), 5*time.Second)
	t.Logf("subscribed %s after the hub came up", ev.At.Sub(up).Round(time.Millisecond))

	assert.Equal(t, []int{204}, hub.publish(changeTopic, changeNotification, "sha256", false))
	assert.Equal(t, changeTopic, receive(t, s).Topic)
	// The first failure and the 2nd, 4th... are warnings, one line each.
	assert.Contains(t, logs.String(), "subscribe request failed; retrying")
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "notify: subscribed") }, waitLimit, 10*time.Millisecond)
	assert.Regexp(t, `msg="notify: subscribed" .* failed_before=[3-9]`, logs.String())
}

func TestKeepRetriesADeniedSubscription(t *testing.T) {
	t.Parallel()
	hub := newTestHub(t, 3600)
	hub.deny.Store(true)
	s, _ := startSubscriber(t, Options{RetryMin: 50 * time.Millisecond, RetryMax: 100 * time.Millisecond})
	require.NoError(t, s.Keep(hub.URL(), changeTopic))
	st := waitState(t, s, Retrying)
	require.ErrorIs(t, st.Err, ErrDenied)
	hub.deny.Store(false)
	waitState(t, s, Subscribed)
	// The subscriber is Subscribed once it has answered the hub's
	// challenge; the hub records it when that answer reaches it, a moment
	// later.
	require.Eventually(t, func() bool { return hub.subscriberCount() == 1 }, waitLimit, 5*time.Millisecond)
}

func TestRevokedSubscriptionIsRequestedAgain(t *testing.T) {
	t.Parallel()
	hub := newTestHub(t, 3600)
	s, logs := startSubscriber(t, Options{RetryMin: 50 * time.Millisecond})
	require.NoError(t, s.Keep(hub.URL(), changeTopic))
	ev, ok := hub.next(waitLimit)
	require.True(t, ok)
	waitState(t, s, Subscribed)

	hub.deny.Store(true)
	hub.verify("subscribe", changeTopic, ev.Callback, "") // the hub revokes it
	hub.deny.Store(false)
	again, ok := hub.next(waitLimit) // the revocation
	require.True(t, ok)
	assert.Equal(t, "denied", again.Mode)
	again, ok = hub.next(waitLimit) // the new subscription
	require.True(t, ok)
	assert.Equal(t, "subscribe", again.Mode)
	assert.True(t, again.Verified)
	waitState(t, s, Subscribed)
	assert.Contains(t, logs.String(), "hub revoked the subscription")
}

func TestKeepArguments(t *testing.T) {
	t.Parallel()
	s, _ := startSubscriber(t, Options{})
	assert.ErrorContains(t, s.Keep("not a url", changeTopic), "not an absolute URL")
	assert.ErrorContains(t, s.Keep("http://127.0.0.1:1/hub", "/relative"), "not an absolute URL")
	assert.Empty(t, s.States())
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	require.NoError(t, s.Close(ctx))
	assert.ErrorIs(t, s.Keep("http://127.0.0.1:1/hub", changeTopic), ErrClosed)
}

func minKey(m map[int]time.Time) int {
	k := -1
	for n := range m {
		if k < 0 || n < k {
			k = n
		}
	}
	return k
}

func maxKey(m map[int]time.Time) int {
	k := -1
	for n := range m {
		k = max(k, n)
	}
	return k
}
