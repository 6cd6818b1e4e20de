package notify

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hubEvent is one verification the test hub made of a subscriber's intent.
type hubEvent struct {
	Mode     string
	Callback string
	Lease    int
	At       time.Time
	Status   int  // the subscriber's answer
	Verified bool // 2xx with the challenge echoed
}

type hubSub struct {
	topic  string
	secret string
}

// testHub is a small WebSub hub: it takes subscribe and unsubscribe
// requests, verifies the intent by GET with a challenge, and publishes
// signed payloads to verified subscribers.
type testHub struct {
	t      *testing.T
	srv    *httptest.Server
	client *http.Client

	lease      int         // granted hub.lease_seconds
	sync       bool        // verify before answering the request (204), PuSH 0.3 style
	deny       atomic.Bool // refuse every subscription
	wrongTopic bool        // verify with another topic than requested
	failRenew  atomic.Int32

	mu     sync.Mutex
	subs   map[string]hubSub // by callback
	events []hubEvent
	notify chan hubEvent
}

func newTestHub(t *testing.T, lease int) *testHub { return newTestHubAt(t, lease, "") }

// newTestHubAt is newTestHub listening on addr ("": any free port).
func newTestHubAt(t *testing.T, lease int, addr string) *testHub {
	h := &testHub{
		t:      t,
		lease:  lease,
		client: &http.Client{Timeout: 5 * time.Second},
		subs:   make(map[string]hubSub),
		notify: make(chan hubEvent, 100),
	}
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(h.serve))
	if addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("hub: listen on %s: %v", addr, err)
		}
		h.srv.Listener.Close()
		h.srv.Listener = ln
	}
	h.srv.Start()
	t.Cleanup(h.srv.Close)
	return h
}

func (h *testHub) URL() string { return h.srv.URL + "/hub" }

func (h *testHub) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	mode, topic, callback := r.PostForm.Get("hub.mode"), r.PostForm.Get("hub.topic"), r.PostForm.Get("hub.callback")
	if (mode != "subscribe" && mode != "unsubscribe") || topic == "" || callback == "" {
		http.Error(w, "missing hub.mode, hub.topic or hub.callback", http.StatusBadRequest)
		return
	}
	if mode == "subscribe" && h.subscribed(callback) && h.failRenew.Add(-1) >= 0 {
		http.Error(w, "hub overloaded", http.StatusInternalServerError)
		return
	}
	secret := r.PostForm.Get("hub.secret")
	if h.sync {
		if !h.verify(mode, topic, callback, secret) {
			http.Error(w, "verification failed", http.StatusConflict)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.WriteHeader(http.StatusAccepted)
	go h.verify(mode, topic, callback, secret)
}

func (h *testHub) subscribed(callback string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.subs[callback]
	return ok
}

// verify asks the callback to confirm mode (or tells it the hub denies).
func (h *testHub) verify(mode, topic, callback, secret string) bool {
	q := url.Values{"hub.topic": {topic}}
	if h.wrongTopic {
		q.Set("hub.topic", "http://example.com/some/other/topic/")
	}
	challenge := randomChallenge()
	switch {
	case h.deny.Load() && mode == "subscribe":
		q.Set("hub.mode", "denied")
		q.Set("hub.reason", "topic not served here")
	default:
		q.Set("hub.mode", mode)
		q.Set("hub.challenge", challenge)
		if mode == "subscribe" {
			q.Set("hub.lease_seconds", strconv.Itoa(h.lease))
		}
	}
	resp, err := h.client.Get(callback + "?" + q.Encode())
	if err != nil {
		h.t.Logf("hub: verification GET: %v", err)
		return false
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	ev := hubEvent{Mode: q.Get("hub.mode"), Callback: callback, Lease: h.lease, At: time.Now(), Status: resp.StatusCode}
	ev.Verified = resp.StatusCode/100 == 2 && challenge != "" && string(body) == challenge && q.Get("hub.mode") != "denied"
	h.record(ev, hubSub{topic: topic, secret: secret})
	return ev.Verified
}

func (h *testHub) record(ev hubEvent, sub hubSub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ev.Verified && ev.Mode == "subscribe" {
		h.subs[ev.Callback] = sub
	}
	if ev.Verified && ev.Mode == "unsubscribe" {
		delete(h.subs, ev.Callback)
	}
	h.events = append(h.events, ev)
	h.notify <- ev
}

// next waits for the hub's next verification.
func (h *testHub) next(timeout time.Duration) (hubEvent, bool) {
	select {
	case ev := <-h.notify:
		return ev, true
	case <-time.After(timeout):
		return hubEvent{}, false
	}
}

func (h *testHub) subscriberCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// publish delivers payload to every verified subscriber of topic, signed
// with method; tamper changes the body after signing. It returns the
// subscribers' status codes.
func (h *testHub) publish(topic, payload, method string, tamper bool) []int {
	h.mu.Lock()
	targets := make(map[string]hubSub)
	for cb, sub := range h.subs {
		if sub.topic == topic {
			targets[cb] = sub
		}
	}
	h.mu.Unlock()
	var statuses []int
	for cb, sub := range targets {
		statuses = append(statuses, h.deliver(cb, topic, sub.secret, []byte(payload), method, tamper))
	}
	return statuses
}

func (h *testHub) deliver(callback, topic, secret string, body []byte, method string, tamper bool) int {
	sig, err := Sign(method, secret, body)
	if err != nil {
		h.t.Fatalf("hub: sign: %v", err)
	}
	if tamper {
		body = []byte(strings.Replace(string(body), "updated", "deleted", 1))
	}
	req, err := http.NewRequest(http.MethodPost, callback, strings.NewReader(string(body)))
	if err != nil {
		h.t.Fatalf("hub: delivery request: %v", err)
	}
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("Link", fmt.Sprintf("<%s>; rel=\"self\", <%s>; rel=\"hub\"", topic, h.URL()))
	req.Header.Set(SignatureHeader, sig)
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Logf("hub: delivery: %v", err)
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// callbacks lists the callbacks the hub holds a verified subscription for.
func (h *testHub) callbacks() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var cbs []string
	for cb := range h.subs {
		cbs = append(cbs, cb)
	}
	return cbs
}

func randomChallenge() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}
