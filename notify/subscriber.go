package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"rsfs/resourcesync"
)

// Errors a Subscriber returns.
var (
	// ErrDenied is a subscription the hub refused (hub.mode=denied).
	ErrDenied = errors.New("notify: hub denied the subscription")
	// ErrNotVerified is a request the hub did not verify in time.
	ErrNotVerified = errors.New("notify: hub did not verify the request")
	// ErrClosed is a call on a closed Subscriber.
	ErrClosed = errors.New("notify: subscriber closed")
)

// Notification is one parsed payload a hub delivered.
type Notification struct {
	Topic    string
	Hub      string
	Doc      *resourcesync.Document
	Received time.Time
}

// Subscriber is a WebSub subscriber: a callback server and the
// subscriptions it serves.
type Subscriber struct {
	opts    Options
	log     *slog.Logger
	client  *http.Client // sends subscribe and unsubscribe requests
	baseURL string
	server  *http.Server
	served  chan struct{} // closed when Serve returns
	notes   chan Notification
	quit    chan struct{} // closed when Close starts stopping deliveries

	mu         sync.Mutex
	subs       map[string]*subscription // by callback id
	closed     bool                     // Close has started: no new subscriptions
	draining   bool                     // no new deliveries
	deliveries sync.WaitGroup           // deliveries in progress
}

// Start listens on opts.Addr and serves the callback endpoint until Close.
func Start(opts Options) (*Subscriber, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("notify: listen on %s: %w", opts.Addr, err)
	}
	base, err := publicURL(opts.PublicURL, ln.Addr())
	if err != nil {
		ln.Close()
		return nil, err
	}
	s := &Subscriber{
		opts:    opts,
		log:     opts.Logger,
		client:  &http.Client{Timeout: 30 * time.Second},
		baseURL: base,
		served:  make(chan struct{}),
		notes:   make(chan Notification, opts.Buffer),
		quit:    make(chan struct{}),
		subs:    make(map[string]*subscription),
	}
	s.server = &http.Server{
		Handler:           http.HandlerFunc(s.serveCallback),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       60 * time.Second,
	}
	go s.serve(ln)
	s.log.Info("notify: callback server started", "listen", ln.Addr().String(), "url", base)
	return s, nil
}

func (s *Subscriber) serve(ln net.Listener) {
	defer close(s.served)
	if err := s.server.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.log.Error("notify: callback server stopped", "err", err)
	}
}

// publicURL is the configured base URL without a trailing slash, or one made
// from the listener's address.
func publicURL(configured string, addr net.Addr) (string, error) {
	if configured != "" {
		return strings.TrimRight(configured, "/"), nil
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "", fmt.Errorf("notify: listener address %s: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		name, err := os.Hostname()
		if err != nil {
			return "", fmt.Errorf("notify: listening on all interfaces and no PublicURL: %w", err)
		}
		host = name
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

// URL returns the base URL of the callback server; each subscription's
// callback is below it.
func (s *Subscriber) URL() string { return s.baseURL }

// Notifications returns the parsed payloads, in the order they arrived. It is
// closed when Close returns.
func (s *Subscriber) Notifications() <-chan Notification { return s.notes }

// Close unsubscribes every subscription (waiting for the hub to verify each
// within ctx and VerifyTimeout), stops renewals and the callback server, and
// closes the Notifications channel. It returns the unsubscribe failures.
func (s *Subscriber) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.closed = true
	subs := make([]*subscription, 0, len(s.subs))
	for _, sub := range s.subs {
		subs = append(subs, sub)
	}
	s.mu.Unlock()

	errs := s.unsubscribeAll(ctx, subs)
	s.mu.Lock()
	s.draining = true
	s.mu.Unlock()
	close(s.quit)
	if err := s.server.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("notify: stop callback server: %w", err))
		s.server.Close()
	}
	<-s.served
	s.deliveries.Wait()
	close(s.notes)
	return errors.Join(errs...)
}

// unsubscribeAll stops every renewal, then unsubscribes each subscription
// that is active at its hub.
func (s *Subscriber) unsubscribeAll(ctx context.Context, subs []*subscription) []error {
	for _, sub := range subs {
		sub.stopRenewal()
	}
	var errs []error
	for _, sub := range subs {
		if !s.isActive(sub) {
			continue
		}
		if err := s.request(ctx, sub, modeUnsubscribe); err != nil {
			errs = append(errs, err)
			continue
		}
		s.log.Info("notify: unsubscribed", "hub", sub.hub, "topic", sub.topic)
	}
	s.mu.Lock()
	clear(s.subs)
	s.mu.Unlock()
	return errs
}

func (s *Subscriber) isActive(sub *subscription) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sub.active
}
