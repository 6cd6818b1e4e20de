package e2e

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

// testHub is a small WebSub hub: it verifies subscribers' intent and relays
// what a Source publishes, signed with each subscriber's secret.
type testHub struct {
	srv  *httptest.Server
	mu   sync.Mutex
	subs map[string]map[string]string // topic → callback → secret
	log  []string
}

func startHub(t *testing.T) *testHub { return startHubBehind(t, nil) }

// startHubBehind is startHub with front, if not nil, wrapped around the
// hub's handler (to slow or break some of its answers).
func startHubBehind(t *testing.T, front func(http.Handler) http.Handler) *testHub {
	h := &testHub{subs: map[string]map[string]string{}}
	var handler http.Handler = http.HandlerFunc(h.serve)
	if front != nil {
		handler = front(handler)
	}
	h.srv = httptest.NewServer(handler)
	t.Cleanup(h.srv.Close)
	return h
}

func (h *testHub) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		form, _ := url.ParseQuery(string(body))
		w.WriteHeader(http.StatusAccepted)
		go h.verify(form.Get("hub.mode"), form.Get("hub.topic"), form.Get("hub.callback"), form.Get("hub.secret"))
		return
	}
	topic := linkRel(r.Header.Get("Link"), "self")
	h.mu.Lock()
	subs := map[string]string{}
	for cb, secret := range h.subs[topic] {
		subs[cb] = secret
	}
	h.mu.Unlock()
	for cb, secret := range subs {
		req, _ := http.NewRequest(http.MethodPost, cb, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/xml")
		req.Header.Set("Link", r.Header.Get("Link"))
		if secret != "" {
			mac := hmac.New(sha256.New, []byte(secret))
			mac.Write(body)
			req.Header.Set("X-Hub-Signature", "sha256="+hex.EncodeToString(mac.Sum(nil)))
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *testHub) verify(mode, topic, callback, secret string) {
	buf := make([]byte, 8)
	_, _ = rand.Read(buf)
	challenge := hex.EncodeToString(buf)
	q := url.Values{"hub.mode": {mode}, "hub.topic": {topic}, "hub.challenge": {challenge}, "hub.lease_seconds": {"3600"}}
	sep := "?"
	if strings.Contains(callback, "?") {
		sep = "&"
	}
	resp, err := http.Get(callback + sep + q.Encode())
	if err != nil {
		return
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(got) != challenge {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.log = append(h.log, mode+" "+topic)
	if mode == "subscribe" {
		if h.subs[topic] == nil {
			h.subs[topic] = map[string]string{}
		}
		h.subs[topic][callback] = secret
	} else {
		delete(h.subs[topic], callback)
	}
}

func (h *testHub) subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, s := range h.subs {
		n += len(s)
	}
	return n
}

func linkRel(header, rel string) string {
	for _, part := range strings.Split(header, ",") {
		if strings.Contains(part, `rel="`+rel+`"`) {
			target, _, _ := strings.Cut(part, ";")
			return strings.Trim(strings.TrimSpace(target), "<>")
		}
	}
	return ""
}

func TestPushedNotificationShowsAtOnce(t *testing.T) {
	t.Parallel()
	hub := startHub(t)
	src := startSource(t, sourcetest.Config{Resources: 20, Hub: hub.srv.URL + "/"})
	m := mount(t, src.URL(), "--poll-interval", "1h", "--notify-addr", "127.0.0.1:0")
	waitFor(t, hangBound, "the subscription", func() bool { return hub.subscribers() == 1 })
	files := walkFiles(t, m.dir)
	r := src.Resources()[2]
	_, err := os.ReadFile(files[r.URI])
	require.NoError(t, err)

	start := time.Now()
	require.NoError(t, src.Update(r.URI, []byte("pushed\n")))
	// Polls are an hour apart, so only the push can show the change; the
	// bound only catches a change that never shows.
	waitFor(t, 30*time.Second, "the pushed change", func() bool {
		got, err := os.ReadFile(files[r.URI])
		return err == nil && string(got) == "pushed\n"
	})
	t.Logf("pushed change visible after %s", time.Since(start).Round(time.Millisecond))

	m.unmount(t)
	waitFor(t, hangBound, "the unsubscription", func() bool { return hub.subscribers() == 0 })
	hub.mu.Lock()
	defer hub.mu.Unlock()
	assert.Equal(t, []string{"subscribe " + src.NotificationTopic(0), "unsubscribe " + src.NotificationTopic(0)}, hub.log)
}
