package notify

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"rsfs/resourcesync"
)

// serveDelivery takes a notification the hub POSTs to an active
// subscription's callback: it checks the size and the signature, parses the
// payload and queues it, waiting at most DeliveryWait for room.
func (s *Subscriber) serveDelivery(w http.ResponseWriter, r *http.Request, id string) {
	hub, topic, status := s.admit(id)
	if status != 0 {
		http.Error(w, http.StatusText(status), status)
		return
	}
	defer s.deliveries.Done()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxPayload))
	if err != nil {
		s.refuse(w, topic, deliveryReadStatus(err), fmt.Errorf("read payload: %w", err))
		return
	}
	if err := checkSignature(r.Header.Get(SignatureHeader), s.opts.Secret, body); err != nil {
		s.refuse(w, topic, http.StatusForbidden, fmt.Errorf("reject delivery: %w", err))
		return
	}
	doc, err := resourcesync.Parse(bytes.NewReader(body), topic, resourcesync.Options{MaxBytes: s.opts.MaxPayload})
	if err != nil {
		s.refuse(w, topic, http.StatusBadRequest, fmt.Errorf("parse payload: %w", err))
		return
	}
	n := Notification{Topic: topic, Hub: hub, Doc: doc, Received: time.Now()}
	if !s.enqueue(n) {
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(s.opts.DeliveryWait/time.Second))))
		s.refuse(w, topic, http.StatusServiceUnavailable, errors.New("notification queue full"))
		return
	}
	s.log.Debug("notify: notification received", "topic", topic, "capability", doc.Header.Capability(), "entries", len(doc.Entries))
	w.WriteHeader(http.StatusNoContent)
}

// admit finds the active subscription behind callback id and counts the
// delivery in. A non-zero status means the delivery is refused.
func (s *Subscriber) admit(id string) (hub, topic string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sub := s.subs[id]
	if sub == nil || !sub.active {
		return "", "", http.StatusNotFound
	}
	if s.draining {
		return "", "", http.StatusServiceUnavailable
	}
	s.deliveries.Add(1)
	return sub.hub, sub.topic, 0
}

// enqueue hands n to the reader, waiting at most DeliveryWait; false when
// the queue stayed full or the subscriber is closing.
func (s *Subscriber) enqueue(n Notification) bool {
	select {
	case s.notes <- n:
		return true
	default:
	}
	t := time.NewTimer(s.opts.DeliveryWait)
	defer t.Stop()
	select {
	case s.notes <- n:
		return true
	case <-t.C:
		return false
	case <-s.quit:
		return false
	}
}

func deliveryReadStatus(err error) int {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

func (s *Subscriber) refuse(w http.ResponseWriter, topic string, status int, err error) {
	s.log.Warn("notify: delivery refused", "topic", topic, "status", status, "err", err)
	http.Error(w, err.Error(), status)
}
