package changes

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/notify"
	"rsfs/resourcesync"
	"rsfs/source"
	"rsfs/status"
)

// verifyingHub answers every subscription request 202 and then verifies
// the intent at the callback, granting an hour.
func verifyingHub(w http.ResponseWriter, r *http.Request) {
	if r.ParseForm() != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	q := url.Values{"hub.mode": {r.PostForm.Get("hub.mode")}, "hub.topic": {r.PostForm.Get("hub.topic")},
		"hub.challenge": {"c4a11e"}, "hub.lease_seconds": {"3600"}}
	callback := r.PostForm.Get("hub.callback")
	w.WriteHeader(http.StatusAccepted)
	go func() {
		if resp, err := http.Get(callback + "?" + q.Encode()); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
}

func pushOf(st status.Follow, topic string) status.Push {
	for _, p := range st.Push {
		if p.Topic == topic {
			return p
		}
	}
	return status.Push{}
}

func TestSubscriptionsRetryAHubThatIsDownAndStatusShowsThem(t *testing.T) {
	_, f, _ := startTwoSets(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close() // the hub is down until it listens there
	hub := "http://" + addr + "/hub"
	sets := f.sets()
	sets[0].Hubs = []source.Channel{{Capability: resourcesync.CapChangeNotification, Topic: "http://s/t1", Hub: hub}}
	sets[1].Hubs = []source.Channel{{Capability: resourcesync.CapChangeNotification, Topic: "http://s/t2", Hub: "no hub"}}
	assert.Empty(t, f.Status().Push, "nothing before Subscribe")

	sub, err := notify.Start(notify.Options{Addr: "127.0.0.1:0", RetryMin: 50 * time.Millisecond, RetryMax: 200 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		sub.Close(ctx)
	})
	start := time.Now()
	n, err := f.Subscribe(context.Background(), sub)
	assert.Equal(t, 1, n)
	require.ErrorContains(t, err, "not an absolute URL")
	assert.Less(t, time.Since(start), time.Second, "Subscribe does not wait for the hub")

	bad := pushOf(f.Status(), "http://s/t2")
	assert.Equal(t, status.PushFailed, bad.State)
	assert.Contains(t, bad.Err, "not an absolute URL")
	assert.Zero(t, bad.Next, "never tried again")

	require.Eventually(t, func() bool { return pushOf(f.Status(), "http://s/t1").State == status.PushRetrying }, 10*time.Second, 5*time.Millisecond)
	p := pushOf(f.Status(), "http://s/t1")
	assert.Equal(t, hub, p.Hub)
	assert.Contains(t, p.Err, "connection refused")
	assert.False(t, p.Next.IsZero(), "the next attempt is due")

	ln, err = net.Listen("tcp", addr)
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(verifyingHub))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	require.Eventually(t, func() bool { return pushOf(f.Status(), "http://s/t1").State == status.PushSubscribed }, 10*time.Second, 5*time.Millisecond)
	p = pushOf(f.Status(), "http://s/t1")
	assert.Empty(t, p.Err)
	assert.WithinDuration(t, time.Now().Add(48*time.Minute), p.Next, time.Minute, "renewed at 80% of the hour granted")
	assert.Len(t, f.Status().Push, 2)
}
