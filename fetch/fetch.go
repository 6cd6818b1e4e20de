// Package fetch is the HTTP client of rsfs: whole-document GETs (conditional
// too), HEAD with a Range fallback, byte-range reads (also as an io.ReaderAt),
// retries with exponential backoff and full jitter, bounded redirects, the
// origin policy (Policy): the origins requests may go to, and credentials
// that never leave their origin, and each origin's pacer (pace.go), which
// every attempt and redirect hop waits at. Origins are keyed in package
// origin's canonical form. It knows nothing of ResourceSync or FUSE.
package fetch

import (
	"crypto/tls"
	"log/slog"
	"net/http"
	"time"
)

// Version is the rsfs version, set by the rsfs command, which the default
// User-Agent carries (DefaultUserAgent).
var Version = "dev"

// Defaults used where an Options field is zero.
const (
	DefaultTimeout         = 30 * time.Second
	DefaultRetries         = 4
	DefaultBackoffBase     = 200 * time.Millisecond
	DefaultBackoffMax      = 5 * time.Second
	DefaultMaxRedirects    = 5
	DefaultMaxConnsPerHost = 16
	DefaultMinRate         = 1 << 10 // bytes per second
	DefaultMaxRetryAfter   = 30 * time.Second
)

// Options configure a Client. Zero fields take the defaults above.
type Options struct {
	// Timeout bounds each attempt until its response headers arrive, and each
	// single body Read (a stalled body fails with ErrTimeout). Default 30s.
	Timeout time.Duration
	// MinRate is the slowest body transfer accepted, in bytes per second,
	// averaged over each Timeout spent waiting in Read: a body that
	// delivers less (a drip) fails with ErrTimeout like a stalled one, and
	// is retried or resumed as such. Default DefaultMinRate; negative means
	// no minimum (only a Read with no byte for Timeout fails).
	MinRate int64
	// Retries is the number of attempts after the first, on timeouts,
	// connection resets and refusals, connections closed before the headers,
	// and 5xx and 429 answers; never on another 4xx. Default 4; negative
	// means no retries.
	Retries int
	// BackoffBase is the first backoff ceiling; it doubles per retry up to
	// BackoffMax, and the wait is drawn uniformly below it (full jitter).
	// Defaults 200ms and 5s. BackoffMax also bounds an origin's pause after
	// a 429 or 503 without Retry-After (pace.go); MaxRetryAfter bounds one
	// with it.
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// MaxRedirects bounds the redirects followed per request. Default 5;
	// negative means redirects are not followed.
	MaxRedirects int
	// Headers are extra headers (credentials, e.g. Authorization) sent only on
	// requests to CredentialOrigin, never to another origin, also not after a
	// redirect.
	Headers http.Header
	// CredentialOrigin is the scheme://host[:port] that Headers may go to,
	// normally the Source's origin. It is allowed by the host policy.
	CredentialOrigin string
	// MaxConnsPerHost bounds the connections per host. Default 16.
	MaxConnsPerHost int
	// Logger receives retries and policy warnings. Default slog.Default().
	Logger *slog.Logger
	// TLSClientConfig, when set, replaces the default TLS settings (system
	// roots), e.g. to trust a private CA.
	TLSClientConfig *tls.Config
	// MaxRate bounds the requests a second to each origin (a token bucket
	// per origin, every attempt and redirect hop counted); 0 means no
	// bound but what the origin's own answers teach (pace.go).
	MaxRate float64
	// BandwidthLimit bounds the response body bytes a second read across
	// the Client; 0 means none.
	BandwidthLimit int64
	// MaxRetryAfter bounds the Retry-After of a 429 or 503 honoured, for
	// the request and for its origin's pause. Default 30s.
	MaxRetryAfter time.Duration
	// UserAgent names the client in every request. Default DefaultUserAgent().
	UserAgent string
	// OfflineWait, if set, has the Client keep each origin's offline state
	// (offline.go) and bounds how long a request that is not a Probe waits
	// for an origin that does not answer, retries included; 0: no state,
	// every request retries as Retries says.
	OfflineWait time.Duration
	// Offline: the Client sends nothing; every request fails at once with
	// an *OfflineError (rsfs mount --offline).
	Offline bool
	// Advice is what the errors say would fix them, in the words of the
	// program that uses fetch (its flags): fetch names no flag.
	Advice Advice
}

// ProjectURL is where rsfs is described, named in the default User-Agent
// so that a Source's operator can find who is asking. A packager may set
// it at build time (-ldflags "-X rsfs/fetch.ProjectURL=...").
var ProjectURL = "https://rsfs.example.org/"

// DefaultUserAgent is the User-Agent of a Client whose Options name none:
// "rsfs/VERSION (+ProjectURL)".
func DefaultUserAgent() string { return "rsfs/" + Version + " (+" + ProjectURL + ")" }

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	o.Retries = orDefault(o.Retries, DefaultRetries)
	if o.MinRate == 0 {
		o.MinRate = DefaultMinRate
	}
	o.MaxRedirects = orDefault(o.MaxRedirects, DefaultMaxRedirects)
	if o.BackoffBase <= 0 {
		o.BackoffBase = DefaultBackoffBase
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = DefaultBackoffMax
	}
	if o.BackoffMax < o.BackoffBase {
		o.BackoffMax = o.BackoffBase
	}
	if o.MaxConnsPerHost <= 0 {
		o.MaxConnsPerHost = DefaultMaxConnsPerHost
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent()
	}
	o.MaxRate = max(o.MaxRate, 0)
	o.BandwidthLimit = max(o.BandwidthLimit, 0)
	o.Headers = o.Headers.Clone()
	return o
}

// orDefault maps 0 to def and a negative value to 0.
func orDefault(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}
