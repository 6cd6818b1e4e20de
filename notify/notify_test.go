package notify

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/resourcesync"
	"rsfs/tests/logbuf"
)

// waitLimit bounds every wait for something that must happen; it only
// guards against a hang.
const waitLimit = 30 * time.Second

// startSubscriber starts a Subscriber on 127.0.0.1 whose logs go to the
// returned buffer, and closes it at the end of the test.
func startSubscriber(t *testing.T, opts Options) (*Subscriber, *logbuf.Buffer) {
	t.Helper()
	logs := &logbuf.Buffer{}
	opts.Addr = "127.0.0.1:0"
	opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if opts.VerifyTimeout == 0 {
		opts.VerifyTimeout = 2 * time.Second
	}
	s, err := Start(opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		s.Close(ctx)
	})
	return s, logs
}

// subscribe subscribes s to topic at hub and returns the hub's record of the
// verification: the hub activates a subscription once it has read the
// answer, which may be after Subscribe returns.
func subscribe(t *testing.T, s *Subscriber, hub *testHub, topic string) hubEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	require.NoError(t, s.Subscribe(ctx, hub.URL(), topic))
	ev, ok := hub.next(waitLimit)
	require.True(t, ok, "hub recorded no verification")
	return ev
}

func receive(t *testing.T, s *Subscriber) Notification {
	t.Helper()
	select {
	case n, ok := <-s.Notifications():
		require.True(t, ok, "notifications channel closed")
		return n
	case <-time.After(waitLimit):
		t.Fatal("no notification within", waitLimit)
		return Notification{}
	}
}

func requireNoNotification(t *testing.T, s *Subscriber) {
	t.Helper()
	select {
	case n := <-s.Notifications():
		t.Fatalf("unexpected notification for %s with %d entries", n.Topic, len(n.Doc.Entries))
	default:
	}
}

func TestChangeNotificationArrivesParsed(t *testing.T) {
	t.Parallel()
	hub := newTestHub(t, 3600)
	s, _ := startSubscriber(t, Options{Lease: time.Hour})
	ev := subscribe(t, s, hub, changeTopic)
	assert.Equal(t, hubEvent{Mode: "subscribe", Callback: ev.Callback, Lease: 3600, At: ev.At, Status: 200, Verified: true}, ev)
	assert.True(t, strings.HasPrefix(ev.Callback, s.URL()+"/cb/"), ev.Callback)

	before := time.Now()
	assert.Equal(t, []int{http.StatusNoContent}, hub.publish(changeTopic, changeNotification, "sha256", false))
	n := receive(t, s)
	assert.Equal(t, changeTopic, n.Topic)
	assert.Equal(t, hub.URL(), n.Hub)
	assert.False(t, n.Received.Before(before))
	doc := n.Doc
	assert.Equal(t, resourcesync.CapChangeNotification, doc.Header.Capability())
	assert.Equal(t, resourcesync.URLSet, doc.Header.Root)
	require.Len(t, doc.Header.Links, 1)
	assert.Equal(t, "up", doc.Header.Links[0].Rel)
	assert.Equal(t, "http://example.com/dataset1/capabilitylist.xml", doc.Header.Links[0].Href)

	require.Len(t, doc.Entries, 3)
	want := []struct {
		loc    string
		change resourcesync.Change
		at     string
		length int64
	}{
		{"http://example.com/res1.html", resourcesync.ChangeCreated, "2013-01-02T13:00:00Z", 4339},
		{"http://example.com/res2.pdf", resourcesync.ChangeUpdated, "2013-01-02T14:00:00Z", 8876},
		{"http://example.com/res3.tiff", resourcesync.ChangeDeleted, "2013-01-02T15:00:00Z", resourcesync.NoLength},
	}
	for i, w := range want {
		e := doc.Entries[i]
		assert.Equal(t, w.loc, e.Loc)
		assert.Equal(t, w.change, e.MD.Change)
		assert.Equal(t, w.at, e.MD.Datetime.UTC().Format(time.RFC3339))
		assert.Equal(t, w.length, e.MD.Length)
	}
	assert.Equal(t, []resourcesync.Hash{{Alg: "md5", Value: "1e0d5cb8ef6ba40c99b14c0237be735e"}}, doc.Entries[1].MD.Hashes)
	assert.Equal(t, "application/pdf", doc.Entries[1].MD.Type)
}

func TestFrameworkNotificationFromSpec(t *testing.T) {
	t.Parallel()
	hub := newTestHub(t, 3600)
	s, _ := startSubscriber(t, Options{})
	subscribe(t, s, hub, frameworkTopic)

	// sha1 is the signature method of PubSubHubbub 0.4; it is still accepted.
	assert.Equal(t, []int{http.StatusNoContent}, hub.publish(frameworkTopic, frameworkNotification, "sha1", false))
	n := receive(t, s)
	assert.Equal(t, frameworkTopic, n.Topic)
	doc := n.Doc
	assert.Equal(t, resourcesync.CapFrameworkNotification, doc.Header.Capability())
	require.Len(t, doc.Entries, 3)
	assert.Equal(t, "http://example.com/dataset1/resourcelist.xml", doc.Entries[0].Loc)
	assert.Equal(t, resourcesync.CapResourceList, doc.Entries[0].MD.Capability)
	assert.Equal(t, resourcesync.ChangeCreated, doc.Entries[0].MD.Change)
	require.Len(t, doc.Entries[0].Links, 1)
	assert.Equal(t, "index", doc.Entries[0].Links[0].Rel)
	assert.Equal(t, "http://example.com/dataset1/resourcelist-index.xml", doc.Entries[0].Links[0].Href)
	assert.Equal(t, resourcesync.CapResourceDump, doc.Entries[1].MD.Capability)
	assert.Equal(t, resourcesync.ChangeCreated, doc.Entries[1].MD.Change)
	assert.Equal(t, resourcesync.CapChangeList, doc.Entries[2].MD.Capability)
	assert.Equal(t, resourcesync.ChangeUpdated, doc.Entries[2].MD.Change)
}

func TestBadSignaturesAreRejected(t *testing.T) {
	t.Parallel()
	hub := newTestHub(t, 3600)
	s, logs := startSubscriber(t, Options{Secret: "s3cret-shared-with-hub"})
	subscribe(t, s, hub, changeTopic)
	callback := hub.callbacks()[0]

	assert.Equal(t, []int{http.StatusForbidden}, hub.publish(changeTopic, changeNotification, "sha256", true))
	assert.Contains(t, logs.String(), "signature does not match")

	signedElsewhere := hub.deliver(callback, changeTopic, "another-secret", []byte(changeNotification), "sha256", false)
	assert.Equal(t, http.StatusForbidden, signedElsewhere)

	unsigned, err := http.Post(callback, "application/xml", strings.NewReader(changeNotification))
	require.NoError(t, err)
	unsigned.Body.Close()
	assert.Equal(t, http.StatusForbidden, unsigned.StatusCode)
	requireNoNotification(t, s)

	// The same payload correctly signed goes through.
	assert.Equal(t, []int{http.StatusNoContent}, hub.publish(changeTopic, changeNotification, "sha512", false))
	assert.Len(t, receive(t, s).Doc.Entries, 3)
}

func TestRenewalBeforeLeaseExpires(t *testing.T) {
	t.Parallel()
	hub := newTestHub(t, 1)
	s, _ := startSubscriber(t, Options{Lease: time.Hour})
	first := subscribe(t, s, hub, changeTopic)
	for i := range 2 {
		renewal, ok := hub.next(waitLimit)
		require.True(t, ok, "renewal %d", i+1)
		assert.Equal(t, "subscribe", renewal.Mode)
		assert.True(t, renewal.Verified)
		assert.Equal(t, first.Callback, renewal.Callback, "renewal keeps the callback")
		// Renewal is due at 0.8 s (TestRenewAtFourFifthsOfTheLease pins
		// the schedule); a timer never fires early, but a busy machine can
		// fire it late, so the upper bound only catches a lost renewal.
		gap := renewal.At.Sub(first.At)
		assert.Greater(t, gap, 700*time.Millisecond, "renewed too early")
		assert.Less(t, gap, 10*time.Second, "renewal lost")
		first = renewal
	}
	assert.Equal(t, []int{http.StatusNoContent}, hub.publish(changeTopic, changeNotification, "sha256", false))
	assert.Equal(t, changeTopic, receive(t, s).Topic)
}

func TestRenewalRetriesAfterHubError(t *testing.T) {
	t.Parallel()
	hub := newTestHub(t, 1)
	hub.failRenew.Store(2)
	s, logs := startSubscriber(t, Options{RetryMin: 100 * time.Millisecond})
	first := subscribe(t, s, hub, changeTopic)
	renewal, ok := hub.next(waitLimit)
	require.True(t, ok)
	assert.True(t, renewal.Verified)
	// Renewal at 0.8 s failed twice; retries wait 0.1 s, then 0.2 s, each
	// shortened by up to a quarter (TestBackoffDoublesToItsBoundWithJitter
	// pins the schedule; the upper bound only catches a lost retry).
	gap := renewal.At.Sub(first.At)
	assert.Greater(t, gap, time.Second)
	assert.Less(t, gap, 10*time.Second)
	assert.Equal(t, 2, strings.Count(logs.String(), "subscribe request failed; retrying"), logs.String())
	assert.Contains(t, logs.String(), "500 Internal Server Error")
	st := waitState(t, s, Subscribed)
	assert.NoError(t, st.Err)
	assert.Zero(t, st.Failures)
}

func TestCloseUnsubscribes(t *testing.T) {
	t.Parallel()
	hub := newTestHub(t, 3600)
	s, _ := startSubscriber(t, Options{})
	subscribe(t, s, hub, changeTopic)
	subscribe(t, s, hub, frameworkTopic)
	require.Equal(t, 2, hub.subscriberCount())

	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	require.NoError(t, s.Close(ctx))

	unsubscribed := map[string]bool{}
	for range 2 {
		ev, ok := hub.next(waitLimit)
		require.True(t, ok)
		assert.Equal(t, "unsubscribe", ev.Mode)
		assert.True(t, ev.Verified)
		unsubscribed[ev.Callback] = true
	}
	assert.Len(t, unsubscribed, 2)
	assert.Equal(t, 0, hub.subscriberCount())

	_, open := <-s.Notifications()
	assert.False(t, open, "Notifications is closed")
	assert.ErrorIs(t, s.Subscribe(ctx, hub.URL(), changeTopic), ErrClosed)
	assert.ErrorIs(t, s.Close(ctx), ErrClosed)
	_, err := http.Get(s.URL() + "/cb/x")
	assert.Error(t, err, "callback server stopped")
}

func TestDeniedSubscription(t *testing.T) {
	t.Parallel()
	hub := newTestHub(t, 3600)
	hub.deny.Store(true)
	s, _ := startSubscriber(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	err := s.Subscribe(ctx, hub.URL(), changeTopic)
	require.ErrorIs(t, err, ErrDenied)
	assert.Contains(t, err.Error(), "topic not served here")
	ev, ok := hub.next(waitLimit)
	require.True(t, ok)
	assert.Equal(t, "denied", ev.Mode)
	assert.Equal(t, http.StatusOK, ev.Status)

	// The refused callback is forgotten.
	resp, err := http.Get(ev.Callback + "?" + url.Values{"hub.mode": {"subscribe"}, "hub.topic": {changeTopic}, "hub.challenge": {"x"}}.Encode())
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestVerificationWithWrongTopicIs404(t *testing.T) {
	t.Parallel()
	hub := newTestHub(t, 3600)
	hub.wrongTopic = true
	s, _ := startSubscriber(t, Options{VerifyTimeout: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	err := s.Subscribe(ctx, hub.URL(), changeTopic)
	require.ErrorIs(t, err, ErrNotVerified)
	ev, ok := hub.next(waitLimit)
	require.True(t, ok)
	assert.Equal(t, http.StatusNotFound, ev.Status)
	assert.False(t, ev.Verified)
	assert.Equal(t, 0, hub.subscriberCount())
}

func TestVerificationRequestsOutsideASubscription(t *testing.T) {
	t.Parallel()
	hub := newTestHub(t, 3600)
	s, _ := startSubscriber(t, Options{})
	subscribe(t, s, hub, changeTopic)
	callback := hub.callbacks()[0]

	get := func(target string, q url.Values) (int, string) {
		resp, err := http.Get(target + "?" + q.Encode())
		require.NoError(t, err)
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	verify := func(mode, topic string) url.Values {
		return url.Values{"hub.mode": {mode}, "hub.topic": {topic}, "hub.challenge": {"c0cc4630"}, "hub.lease_seconds": {"60"}}
	}
	code, _ := get(callback, verify("subscribe", frameworkTopic))
	assert.Equal(t, http.StatusNotFound, code, "wrong topic")
	code, _ = get(s.URL()+"/cb/0123456789abcdef", verify("subscribe", changeTopic))
	assert.Equal(t, http.StatusNotFound, code, "unknown callback")
	code, _ = get(callback, verify("unsubscribe", changeTopic))
	assert.Equal(t, http.StatusNotFound, code, "unsubscribe nobody asked for")
	code, body := get(callback, verify("subscribe", changeTopic))
	assert.Equal(t, http.StatusOK, code, "hub re-verifying an active subscription")
	assert.Equal(t, "c0cc4630", body)

	resp, err := http.Post(s.URL()+"/cb/0123456789abcdef", "application/xml", strings.NewReader(changeNotification))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "delivery to an unknown callback")
}

func TestSynchronousVerification(t *testing.T) {
	t.Parallel()
	hub := newTestHub(t, 3600)
	hub.sync = true
	s, _ := startSubscriber(t, Options{})
	subscribe(t, s, hub, changeTopic)
	assert.Equal(t, 1, hub.subscriberCount())
	assert.Equal(t, []int{http.StatusNoContent}, hub.publish(changeTopic, changeNotification, "sha256", false))
	assert.Equal(t, changeTopic, receive(t, s).Topic)
}

func TestHubRefusesRequest(t *testing.T) {
	t.Parallel()
	s, _ := startSubscriber(t, Options{})
	srv := httptestServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "topic unknown", http.StatusBadRequest)
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	err := s.Subscribe(ctx, srv, changeTopic)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "400 Bad Request: topic unknown")
	assert.Error(t, s.Subscribe(ctx, "not a url", changeTopic))
}

func TestFullQueueAnswers503(t *testing.T) {
	t.Parallel()
	hub := newTestHub(t, 3600)
	s, _ := startSubscriber(t, Options{Buffer: 1, DeliveryWait: 100 * time.Millisecond})
	subscribe(t, s, hub, changeTopic)
	assert.Equal(t, []int{http.StatusNoContent}, hub.publish(changeTopic, changeNotification, "sha256", false))
	start := time.Now()
	assert.Equal(t, []int{http.StatusServiceUnavailable}, hub.publish(changeTopic, frameworkNotification, "sha256", false))
	assert.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond, "the delivery waited for room")
	assert.Equal(t, resourcesync.CapChangeNotification, receive(t, s).Doc.Header.Capability())
	assert.Equal(t, []int{http.StatusNoContent}, hub.publish(changeTopic, frameworkNotification, "sha256", false))
	assert.Equal(t, resourcesync.CapFrameworkNotification, receive(t, s).Doc.Header.Capability())
}

func TestBadPayloads(t *testing.T) {
	t.Parallel()
	hub := newTestHub(t, 3600)
	s, logs := startSubscriber(t, Options{MaxPayload: 2048})
	subscribe(t, s, hub, changeTopic)
	assert.Equal(t, []int{http.StatusBadRequest}, hub.publish(changeTopic, "<urlset><url><loc>x</url>", "sha256", false))
	assert.Contains(t, logs.String(), "parse payload")
	big := strings.Replace(changeNotification, "<url>", "<!--"+strings.Repeat("x", 2048)+"--><url>", 1)
	assert.Equal(t, []int{http.StatusRequestEntityTooLarge}, hub.publish(changeTopic, big, "sha256", false))
	requireNoNotification(t, s)
}

func httptestServer(t *testing.T, h http.HandlerFunc) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestCloseWithUnreachableHubStillStops(t *testing.T) {
	t.Parallel()
	hub := newTestHub(t, 3600)
	s, _ := startSubscriber(t, Options{})
	subscribe(t, s, hub, changeTopic)
	hub.srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	err := s.Close(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unsubscribe "+changeTopic)
	_, open := <-s.Notifications()
	assert.False(t, open)
}
