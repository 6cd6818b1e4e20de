package notify

import (
	"fmt"
	"net/http"
	"path"
	"strconv"
	"time"
)

// serveCallback routes the hub's requests to a subscription's callback.
func (s *Subscriber) serveCallback(w http.ResponseWriter, r *http.Request) {
	id := path.Base(r.URL.Path)
	switch r.Method {
	case http.MethodGet:
		s.serveVerification(w, r, id)
	case http.MethodPost:
		s.serveDelivery(w, r, id)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// serveVerification answers the hub's verification of intent: the challenge
// is echoed only for a callback and topic this subscriber knows, in the mode
// it asked for (or, for subscribe, a subscription it holds, which a hub may
// re-verify on its own). Anything else is 404, as WebSub prescribes.
func (s *Subscriber) serveVerification(w http.ResponseWriter, r *http.Request, id string) {
	q := r.URL.Query()
	mode, topic, challenge := q.Get("hub.mode"), q.Get("hub.topic"), q.Get("hub.challenge")
	s.mu.Lock()
	defer s.mu.Unlock()
	sub := s.subs[id]
	if sub == nil || topic != sub.topic {
		s.log.Warn("notify: verification for an unknown callback or topic", "callback", id, "topic", topic, "mode", mode)
		http.NotFound(w, r)
		return
	}
	switch mode {
	case modeDenied:
		s.denied(sub, q.Get("hub.reason"))
		w.WriteHeader(http.StatusOK)
		return
	case modeSubscribe:
		if sub.pending == modeUnsubscribe || (sub.pending != modeSubscribe && !sub.active) {
			break
		}
		if challenge == "" {
			http.Error(w, "missing hub.challenge", http.StatusBadRequest)
			return
		}
		sub.lease = s.grantedLease(q.Get("hub.lease_seconds"))
		sub.verified = time.Now()
		sub.active = true
		sub.phase, sub.err, sub.retryAt, sub.failures = Subscribed, nil, time.Time{}, 0
		if sub.pending == modeSubscribe {
			sub.settle(nil)
		}
		echo(w, challenge)
		return
	case modeUnsubscribe:
		if sub.pending != modeUnsubscribe {
			break
		}
		if challenge == "" {
			http.Error(w, "missing hub.challenge", http.StatusBadRequest)
			return
		}
		sub.active = false
		sub.settle(nil)
		echo(w, challenge)
		return
	}
	s.log.Warn("notify: verification of an unrequested action", "topic", topic, "mode", mode, "hub", sub.hub)
	http.NotFound(w, r)
}

// denied records the hub's refusal. Caller holds s.mu.
func (s *Subscriber) denied(sub *subscription, reason string) {
	if reason == "" {
		reason = "no reason given"
	}
	err := fmt.Errorf("%w: %s at %s: %s", ErrDenied, sub.topic, sub.hub, reason)
	requested := sub.pending == modeSubscribe
	if requested {
		sub.settle(err)
	}
	if sub.active {
		s.log.Warn("notify: hub revoked the subscription", "hub", sub.hub, "topic", sub.topic, "reason", reason)
		sub.active = false
		if !requested {
			select { // the keep loop subscribes again after a backoff
			case sub.revoked <- err:
			default:
			}
		}
	}
}

// grantedLease is the hub's hub.lease_seconds, or the requested lease when
// the hub sent none or an unusable value.
func (s *Subscriber) grantedLease(raw string) time.Duration {
	secs, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || secs <= 0 || secs > int64(100*365*24*time.Hour/time.Second) {
		if raw != "" {
			s.log.Warn("notify: unusable hub.lease_seconds, assuming the requested lease", "value", raw)
		}
		return s.opts.Lease
	}
	return time.Duration(secs) * time.Second
}

func echo(w http.ResponseWriter, challenge string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte(challenge))
}
