package notify

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Subscribe asks hub to deliver topic's notifications to a callback of its
// own and waits for the hub to verify the intent, whether it verifies before
// answering the request or after a 202 Accepted. It returns an error wrapping
// ErrDenied when the hub refuses, ErrNotVerified when no verification arrives
// within VerifyTimeout; a failed request is forgotten, not retried (Keep
// retries). A verified subscription is renewed at 80% of its lease until
// Close, a failed renewal retried as Keep retries. Subscribing again to the
// same hub and topic is a no-op.
func (s *Subscriber) Subscribe(ctx context.Context, hub, topic string) error {
	if err := checkURL("hub", hub); err != nil {
		return err
	}
	if err := checkURL("topic", topic); err != nil {
		return err
	}
	sub, existing, err := s.register(hub, topic)
	if err != nil || existing {
		return err
	}
	if err := s.request(ctx, sub, modeSubscribe); err != nil {
		s.forget(sub)
		return err
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return ErrClosed
	}
	sub.renewing.Store(true)
	go s.keepLoop(sub, true)
	s.log.Info("notify: subscribed", "hub", hub, "topic", topic, "callback", sub.callback)
	return nil
}

// Keep subscribes to topic at hub in the background and keeps the
// subscription until Close: a request that fails (the hub down, refusing,
// denying, or not verifying within VerifyTimeout) is tried again after a
// backoff, RetryMin doubling to RetryMax, jittered; a verified subscription
// is renewed at 80% of its lease, and a failed renewal (or a revocation by
// the hub) is retried the same way. It returns at once, with an error only
// for an unusable hub or topic URL or a closed Subscriber. States says how
// each subscription stands. Keeping a hub and topic already subscribed to
// or kept is a no-op.
func (s *Subscriber) Keep(hub, topic string) error {
	if err := checkURL("hub", hub); err != nil {
		return err
	}
	if err := checkURL("topic", topic); err != nil {
		return err
	}
	sub, existing, err := s.register(hub, topic)
	if existing {
		return nil
	}
	if err != nil {
		if sub != nil { // being requested by Subscribe: that one keeps it
			return nil
		}
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed { // Close started after register: it may not stop this one
		delete(s.subs, sub.id)
		return ErrClosed
	}
	sub.renewing.Store(true)
	go s.keepLoop(sub, false)
	return nil
}

func checkURL(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("notify: %s %q: %w", what, raw, err)
	}
	if !u.IsAbs() || u.Host == "" {
		return fmt.Errorf("notify: %s %q is not an absolute URL", what, raw)
	}
	return nil
}

// register adds a subscription with a fresh callback, or reports that one
// for hub and topic exists already.
func (s *Subscriber) register(hub, topic string) (*subscription, bool, error) {
	id, err := randomHex(16)
	if err != nil {
		return nil, false, fmt.Errorf("notify: callback id: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false, ErrClosed
	}
	for _, sub := range s.subs {
		if sub.hub == hub && sub.topic == topic {
			if !sub.active && !sub.renewing.Load() {
				return sub, false, fmt.Errorf("notify: subscription to %s at %s is already being requested", topic, hub)
			}
			return sub, true, nil
		}
	}
	sub := newSubscription(id, hub, topic, s.baseURL+"/cb/"+id)
	s.subs[id] = sub
	return sub, false, nil
}

func (s *Subscriber) forget(sub *subscription) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.subs, sub.id)
}

// request sends a subscribe or unsubscribe request for sub and waits for
// the hub to verify it.
func (s *Subscriber) request(ctx context.Context, sub *subscription, mode string) error {
	s.mu.Lock()
	result := sub.expectVerification(mode)
	s.mu.Unlock()
	err := s.post(ctx, sub, mode)
	if err == nil {
		err = s.awaitVerification(ctx, sub, mode, result)
	}
	if err != nil {
		s.mu.Lock()
		if sub.result == result {
			sub.pending, sub.result = "", nil
		}
		s.mu.Unlock()
	}
	return err
}

func (s *Subscriber) awaitVerification(ctx context.Context, sub *subscription, mode string, result <-chan error) error {
	timer := time.NewTimer(s.opts.VerifyTimeout)
	defer timer.Stop()
	select {
	case err := <-result:
		return err
	case <-timer.C:
		return fmt.Errorf("%w: %s of %s at %s: no verification within %v", ErrNotVerified, mode, sub.topic, sub.hub, s.opts.VerifyTimeout)
	case <-ctx.Done():
		return fmt.Errorf("notify: %s of %s at %s: waiting for verification: %w", mode, sub.topic, sub.hub, ctx.Err())
	}
}

// post sends the subscription request to the hub. Any 2xx is accepted: 202
// means verification follows, 204 (PubSubHubbub 0.3 sync mode) that it has
// happened.
func (s *Subscriber) post(ctx context.Context, sub *subscription, mode string) error {
	form := url.Values{
		"hub.mode":     {mode},
		"hub.topic":    {sub.topic},
		"hub.callback": {sub.callback},
	}
	if mode == modeSubscribe {
		form.Set("hub.lease_seconds", strconv.FormatInt(int64(s.opts.Lease/time.Second), 10))
		form.Set("hub.secret", s.opts.Secret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sub.hub, strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("notify: %s request to %s: %w", mode, sub.hub, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("notify: %s %s at %s: %w", mode, sub.topic, sub.hub, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("notify: %s %s at %s: hub answered %s: %s", mode, sub.topic, sub.hub, resp.Status, strings.TrimSpace(string(body)))
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return nil
}
