// Package notify receives ResourceSync Change and Framework Notifications
// pushed through a PubSubHubbub 0.4 / WebSub hub. It runs the subscriber's
// callback server, subscribes to topics, answers the hub's verification of
// intent, renews leases before they run out, checks the HMAC signature of
// every delivery and hands parsed payloads to the caller.
package notify

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"
)

// Defaults for Options fields left zero.
const (
	DefaultAddr          = "127.0.0.1:0"
	DefaultLease         = 24 * time.Hour
	DefaultMaxPayload    = 16 << 20
	DefaultVerifyTimeout = 30 * time.Second
	DefaultBuffer        = 64
	DefaultDeliveryWait  = 2 * time.Second
	DefaultRetryMin      = time.Second
	DefaultRetryMax      = 5 * time.Minute
)

// Options configure a Subscriber.
type Options struct {
	// Addr is the listen address of the callback server, e.g.
	// "127.0.0.1:8099" or ":0". Default DefaultAddr (loopback only: set
	// PublicURL and Addr for a hub on another host).
	Addr string
	// PublicURL is the base URL the hub reaches the callback server at.
	// Default "http://" + the listener's address (the host name replaces an
	// unspecified IP such as 0.0.0.0 or ::).
	PublicURL string
	// Lease is the requested hub.lease_seconds. Default DefaultLease. A
	// subscription is renewed at 80% of the lease the hub grants.
	Lease time.Duration
	// Secret is the hub.secret used to sign deliveries (X-Hub-Signature).
	// Default: a random one. Deliveries without a valid signature are
	// rejected.
	Secret string
	// Logger receives the subscriber's logs. Default slog.Default().
	Logger *slog.Logger
	// MaxPayload bounds the body of a delivery. Default DefaultMaxPayload.
	MaxPayload int64
	// VerifyTimeout bounds the wait for the hub's verification of a
	// subscribe or unsubscribe request. Default DefaultVerifyTimeout.
	VerifyTimeout time.Duration
	// Buffer is the capacity of the Notifications channel. Default
	// DefaultBuffer.
	Buffer int
	// DeliveryWait is how long a delivery waits for room in a full
	// Notifications channel before it is answered 503. Default
	// DefaultDeliveryWait.
	DeliveryWait time.Duration
	// RetryMin and RetryMax bound the wait before a failed subscribe
	// request (a first one made by Keep, or a renewal) is tried again: it
	// starts at RetryMin and doubles up to RetryMax, each wait shortened by
	// a random part of up to a quarter (jitter). Defaults DefaultRetryMin
	// and DefaultRetryMax.
	RetryMin, RetryMax time.Duration
}

func (o Options) withDefaults() (Options, error) {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.Lease < time.Second {
		return o, fmt.Errorf("notify: lease %v is shorter than one second", o.Lease)
	}
	if o.Secret == "" {
		secret, err := randomHex(24)
		if err != nil {
			return o, fmt.Errorf("notify: generate secret: %w", err)
		}
		o.Secret = secret
	}
	if len(o.Secret) >= 200 {
		return o, fmt.Errorf("notify: secret is %d bytes, WebSub allows fewer than 200", len(o.Secret))
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxPayload <= 0 {
		o.MaxPayload = DefaultMaxPayload
	}
	if o.VerifyTimeout <= 0 {
		o.VerifyTimeout = DefaultVerifyTimeout
	}
	if o.Buffer <= 0 {
		o.Buffer = DefaultBuffer
	}
	if o.DeliveryWait <= 0 {
		o.DeliveryWait = DefaultDeliveryWait
	}
	if o.RetryMin <= 0 {
		o.RetryMin = DefaultRetryMin
	}
	if o.RetryMax <= 0 {
		o.RetryMax = max(DefaultRetryMax, o.RetryMin)
	}
	if o.RetryMax < o.RetryMin {
		return o, fmt.Errorf("notify: RetryMax %v is below RetryMin %v", o.RetryMax, o.RetryMin)
	}
	return o, nil
}

// randomHex returns n random bytes as hex.
func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
