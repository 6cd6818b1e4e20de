package fetch

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"rsfs/origin"
)

// httpOrigin returns rawURL's origin in the canonical form of package
// origin. Only http and https are accepted.
func httpOrigin(rawURL string) (string, error) {
	o, err := origin.Of(rawURL)
	if err != nil {
		return "", fmt.Errorf("fetch: %w", err)
	}
	if !isHTTP(o) {
		return "", fmt.Errorf("fetch: origin of %q: scheme must be http or https", rawURL)
	}
	return o, nil
}

func isHTTP(o string) bool {
	return strings.HasPrefix(o, "http://") || strings.HasPrefix(o, "https://")
}

// Reason says why a Policy allows an origin. An origin keeps the first
// reason it was allowed for.
type Reason uint8

const (
	// ReasonCredentials: the origin the credentials go to
	// (Options.CredentialOrigin), normally that of the URL the user gave.
	ReasonCredentials Reason = iota + 1
	// ReasonAllowHost: the user allowed it (--allow-host, AllowOrigin).
	ReasonAllowHost
	// ReasonGiven: the origin of the URL discovery started from.
	ReasonGiven
	// ReasonSource: the origin where the source's documents place it.
	ReasonSource
	// ReasonDocument: the origin of a document the source names, met by
	// discovery, loading or following.
	ReasonDocument
	// ReasonMirror: the origin of a mirror the source names for a
	// resource. It is remembered (Mirrors) unless allowed otherwise.
	ReasonMirror
	// ReasonSavedMirror: a mirror origin a saved state names (its catalog
	// names the mirror, and is not read through the source's lists again).
	// It is remembered even if allowed otherwise.
	ReasonSavedMirror
)

// Policy is the origin policy of a Client, the one place that says which
// origins requests (and each redirect hop) may go to, and which origin the
// credentials go to. An origin is allowed for a Reason: the credential
// origin when the Client is made, the hosts the user allowed, and then
// what discovery decides (the URL given, the source's origin, its
// documents' origins) and what loading and following meet (documents,
// mirrors). Every request consults it, once per hop. User information in
// a URL is credentials for no origin: it is never sent. A Policy is safe
// for concurrent use.
type Policy struct {
	log         *slog.Logger
	credOrigin  string      // where credentials go; "" for nowhere
	credentials http.Header // sent to credOrigin only

	mu      sync.RWMutex
	allowed map[string]Reason
	mirrors []string // origins allowed as mirrors, in the order met
	any     bool
}

// newPolicy returns the policy of a Client whose credentials (headers) go
// to credOrigin: it allows credOrigin alone.
func newPolicy(credOrigin string, credentials http.Header, log *slog.Logger) *Policy {
	p := &Policy{log: log, allowed: map[string]Reason{}}
	if credOrigin == "" {
		return p
	}
	o, err := httpOrigin(credOrigin)
	if err != nil {
		log.Warn("fetch: credentials will not be sent", "err", err)
		return p
	}
	p.credOrigin, p.credentials = o, credentials
	p.allowed[o] = ReasonCredentials
	return p
}

// Admit allows the origin of rawURL (any URL on it) for why, and returns
// that origin; "" if rawURL has no http or https origin, which is logged
// when it names another scheme. An origin already allowed keeps its
// reason; a mirror origin not allowed otherwise is remembered among the
// mirrors, and a saved mirror always is. When every origin is allowed
// (AllowAnyOrigin), only saved mirrors are remembered.
func (p *Policy) Admit(rawURL string, why Reason) string {
	o, err := origin.Of(rawURL)
	if err != nil {
		return ""
	}
	if !isHTTP(o) { // logged by its origin alone: rawURL may hold user information
		p.log.Warn("fetch: origin not allowed", "origin", o, "err", "scheme must be http or https")
		return ""
	}
	p.mu.RLock()
	_, known := p.allowed[o]
	settled := (known || p.any) && why != ReasonSavedMirror
	p.mu.RUnlock()
	if !settled {
		p.admit(o, why)
	}
	return o
}

// admit allows the canonical origin o for why.
func (p *Policy) admit(o string, why Reason) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, known := p.allowed[o]
	if !known {
		p.allowed[o] = why
	}
	if (why == ReasonMirror && !known) || (why == ReasonSavedMirror && !p.isMirror(o)) {
		p.mirrors = append(p.mirrors, o)
	}
}

func (p *Policy) isMirror(o string) bool {
	for _, m := range p.mirrors {
		if m == o {
			return true
		}
	}
	return false
}

// admitHost allows what the user named: an origin, any URL on one, or a
// bare "host[:port]", which allows both https and http on it. An unusable
// one is logged and ignored.
func (p *Policy) admitHost(allowed string) {
	candidates := []string{allowed}
	if !strings.Contains(allowed, "://") {
		candidates = []string{"https://" + allowed, "http://" + allowed}
	}
	for _, candidate := range candidates {
		o, err := httpOrigin(candidate)
		if err != nil {
			p.log.Warn("fetch: origin not allowed", "origin", candidate, "err", err)
			return
		}
		p.admit(o, ReasonAllowHost)
	}
}

// Allows reports whether requests to rawURL may go.
func (p *Policy) Allows(rawURL string) bool {
	_, ok := p.consult(rawURL)
	return ok
}

// consult is the policy's answer for one request (or redirect hop) to
// rawURL: whether it may go, and the credential headers it carries (nil
// for none).
func (p *Policy) consult(rawURL string) (http.Header, bool) {
	o, err := httpOrigin(rawURL)
	if err != nil {
		return nil, false
	}
	var creds http.Header
	if o == p.credOrigin {
		creds = p.credentials
	}
	p.mu.RLock()
	_, ok := p.allowed[o]
	ok = ok || p.any
	p.mu.RUnlock()
	return creds, ok
}

// Mirrors returns the mirror origins allowed so far (ReasonMirror and
// ReasonSavedMirror), for a snapshot.
func (p *Policy) Mirrors() []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return append([]string(nil), p.mirrors...)
}

// Policy returns the Client's origin policy.
func (c *Client) Policy() *Policy { return c.policy }

// AllowOrigin lets requests (and redirects) go to origin, given as
// "scheme://host[:port]", as any URL on that origin, or as a bare
// "host[:port]", which allows both http and https on it (Policy, for
// ReasonAllowHost). By default every origin is refused except the
// credential origin. An unusable origin is logged and ignored.
func (c *Client) AllowOrigin(allowed string) { c.policy.admitHost(allowed) }

// AllowAnyOrigin lifts the host policy: every http and https origin is
// allowed. Credentials still go only to the credential origin.
func (c *Client) AllowAnyOrigin() {
	c.policy.mu.Lock()
	c.policy.any = true
	c.policy.mu.Unlock()
}

// Allowed reports whether requests to rawURL are allowed by the host policy.
func (c *Client) Allowed(rawURL string) bool { return c.policy.Allows(rawURL) }
