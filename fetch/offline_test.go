package fetch

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hungServer accepts connections and answers nothing until answer is set;
// then it answers 200 "ok".
func hungServer(t *testing.T) (*httptest.Server, *atomic.Bool) {
	var answer atomic.Bool
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !answer.Load() {
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	return srv, &answer
}

// A Source that accepts connections and never answers: the first read
// fails after OfflineWait, the origin is then offline (a hang), the next
// read fails at once without a request, a probe makes one attempt, and
// the first answer ends the state.
func TestOfflineAfterHang(t *testing.T) {
	srv, answer := hungServer(t)
	c := New(Options{Timeout: 300 * time.Millisecond, OfflineWait: 300 * time.Millisecond, Retries: 4, CredentialOrigin: srv.URL})
	ctx := context.Background()

	start := time.Now()
	_, err := c.Get(ctx, srv.URL+"/a", nil)
	require.Error(t, err)
	require.Less(t, time.Since(start), 1300*time.Millisecond, "a read waits OfflineWait, not every retry")
	st := c.Offline()
	require.True(t, st.Offline, "one attempt with no answer in --timeout is an outage of --timeout: %+v", st)
	require.True(t, st.Hang)

	sent := c.Stats().Requests
	start = time.Now()
	_, err = c.Get(ctx, srv.URL+"/b", nil)
	require.ErrorIs(t, err, ErrOffline)
	var oe *OfflineError
	require.True(t, errors.As(err, &oe))
	require.Contains(t, err.Error(), "offline since")
	require.Less(t, time.Since(start), 50*time.Millisecond, "offline: a read fails at once")
	require.Equal(t, sent, c.Stats().Requests, "offline: a read sends nothing")

	_, err = c.Get(Probe(ctx), srv.URL+"/poll", nil)
	require.ErrorIs(t, err, ErrOffline)
	require.Equal(t, sent, c.Stats().Requests, "offline: probes go once a --timeout at most")
	require.Eventually(t, func() bool {
		start = time.Now()
		_, err = c.Get(Probe(ctx), srv.URL+"/poll", nil)
		return c.Stats().Requests > sent
	}, 2*time.Second, 20*time.Millisecond)
	require.Error(t, err)
	require.Equal(t, sent+1, c.Stats().Requests, "offline: a probe makes one attempt")
	require.Less(t, time.Since(start), 1500*time.Millisecond, "within --timeout × attempts (the pacer may hold it after the timeouts)")

	answer.Store(true)
	require.Eventually(t, func() bool {
		resp, err := c.Get(Probe(ctx), srv.URL+"/poll", nil)
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	}, 2*time.Second, 20*time.Millisecond, "a later poll answers")
	require.False(t, c.Offline().Offline, "the first answer ends the offline state")
	resp, err := c.Get(ctx, srv.URL+"/c", nil)
	require.NoError(t, err)
	resp.Body.Close()
}

// A refused Source: a read retries as ever (the failures span less than
// --timeout); once failures span --timeout the origin is offline, not a
// hang.
func TestOfflineAfterRefusals(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String()
	ln.Close()
	c := New(Options{Timeout: 200 * time.Millisecond, OfflineWait: 2 * time.Second, Retries: 2,
		BackoffBase: 10 * time.Millisecond, BackoffMax: 20 * time.Millisecond, CredentialOrigin: url})
	_, err = c.Get(context.Background(), url+"/a", nil)
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrOffline)
	require.False(t, c.Offline().Offline, "refusals over less than --timeout are not yet an outage")
	require.Eventually(t, func() bool {
		_, err := c.Get(context.Background(), url+"/a", nil)
		return errors.Is(err, ErrOffline)
	}, 3*time.Second, 20*time.Millisecond)
	st := c.Offline()
	require.True(t, st.Offline)
	require.False(t, st.Hang)
	require.Contains(t, st.Err, "refused")
}

// Without OfflineWait (inspect, audit) a Client keeps no state.
func TestNoOfflineStateByDefault(t *testing.T) {
	srv, _ := hungServer(t)
	c := New(Options{Timeout: 100 * time.Millisecond, Retries: 1, BackoffBase: time.Millisecond, CredentialOrigin: srv.URL})
	_, err := c.Get(context.Background(), srv.URL+"/a", nil)
	require.ErrorIs(t, err, ErrTimeout)
	require.Equal(t, int64(2), c.Stats().Requests)
	require.False(t, c.Offline().Offline)
}

// The load a user waits for at `rsfs mount` (Patient) goes through all its
// retries at a Source that never answers, though the origin is offline
// after the first: each attempt is sent, none is cut short by the state
// or by OfflineWait; and the state is known afterwards.
func TestPatientRequestsGoThroughTheirRetries(t *testing.T) {
	srv, _ := hungServer(t)
	c := New(Options{Timeout: 200 * time.Millisecond, OfflineWait: 200 * time.Millisecond, Retries: 2,
		BackoffBase: time.Millisecond, BackoffMax: time.Millisecond, CredentialOrigin: srv.URL})
	_, err := c.Get(Patient(Probe(context.Background())), srv.URL+"/.well-known/resourcesync", nil)
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrOffline, "a patient request is not cut short by the offline state")
	require.EqualValues(t, 3, c.Stats().Requests, "every attempt of --retries 2 is sent")
	require.True(t, c.Offline().Offline, "its failures count towards the state")
}
