package e2e

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

// pushStatus is the push part of `rsfs status --json`.
type pushStatus struct {
	Push []struct {
		Hub   string     `json:"hub"`
		Topic string     `json:"topic"`
		State string     `json:"state"`
		Error string     `json:"error"`
		Next  *time.Time `json:"next"`
	} `json:"push"`
}

func readPushStatus(t *testing.T, dir string) pushStatus {
	t.Helper()
	out, stderr, err := run(t, 10*time.Second, rsfsBin, "status", "--json", dir)
	require.NoError(t, err, stderr)
	var st pushStatus
	require.NoError(t, json.Unmarshal([]byte(out), &st), out)
	return st
}

// startHubAt starts testHub listening on addr.
func startHubAt(t *testing.T, addr string) *testHub {
	h := &testHub{subs: map[string]map[string]string{}}
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(h.serve))
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err, "the hub's address was taken meanwhile")
	h.srv.Listener.Close()
	h.srv.Listener = ln
	h.srv.Start()
	t.Cleanup(h.srv.Close)
	return h
}

func TestHubDownAtMountIsRetried(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close() // nothing listens there until the hub comes up
	src := startSource(t, sourcetest.Config{Resources: 20, Hub: "http://" + addr + "/"})
	m := mount(t, src.URL(), "--poll-interval", "1h", "--notify-addr", "127.0.0.1:0")

	// The hub is down: the subscription waits for its next try.
	var st pushStatus
	waitFor(t, hangBound, "the subscription retrying", func() bool {
		st = readPushStatus(t, m.dir)
		return len(st.Push) == 1 && st.Push[0].State == "retrying"
	})
	p := st.Push[0]
	assert.Equal(t, "http://"+addr+"/", p.Hub)
	assert.Equal(t, src.NotificationTopic(0), p.Topic)
	assert.Contains(t, p.Error, "connection refused")
	require.NotNil(t, p.Next, "a retry is due")
	assert.WithinDuration(t, time.Now(), *p.Next, 5*time.Minute)

	time.Sleep(2 * time.Second) // a few tries fail (1 s, 2 s...)
	hub := startHubAt(t, addr)
	up := time.Now()
	// Tries are at most 5 minutes apart, but this soon after the mount
	// the next is within about 4 s of the hub coming up (the backoff
	// doubles from 1 s: 1, 2, 4 s so far, jittered); the bound only
	// catches a subscription never retried.
	waitFor(t, 30*time.Second, "the subscription", func() bool { return hub.subscribers() == 1 })
	t.Logf("subscribed %s after the hub came up", time.Since(up).Round(time.Millisecond))
	waitFor(t, hangBound, "status to say subscribed", func() bool {
		st = readPushStatus(t, m.dir)
		return len(st.Push) == 1 && st.Push[0].State == "subscribed"
	})
	assert.Empty(t, st.Push[0].Error)
	require.NotNil(t, st.Push[0].Next, "the renewal is due")
	assert.WithinDuration(t, time.Now().Add(48*time.Minute), *st.Push[0].Next, 2*time.Minute, "at 80% of the hub's hour")

	files := walkFiles(t, m.dir)
	r := src.Resources()[3]
	_, err = os.ReadFile(files[r.URI])
	require.NoError(t, err)
	require.NoError(t, src.Update(r.URI, []byte("pushed after a retry\n")))
	// Polls are an hour apart: only the push can show the change.
	waitFor(t, 30*time.Second, "the pushed change", func() bool {
		got, err := os.ReadFile(files[r.URI])
		return err == nil && string(got) == "pushed after a retry\n"
	})
	logs, err := os.ReadFile(m.logFile)
	require.NoError(t, err)
	assert.Contains(t, string(logs), "subscribe request failed; retrying")
}
