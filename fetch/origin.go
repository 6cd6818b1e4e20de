package fetch

import (
	"fmt"
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
	if !strings.HasPrefix(o, "http://") && !strings.HasPrefix(o, "https://") {
		return "", fmt.Errorf("fetch: origin of %q: scheme must be http or https", rawURL)
	}
	return o, nil
}

// originSet is the host policy: the origins requests may go to.
type originSet struct {
	mu      sync.RWMutex
	origins map[string]struct{}
	any     bool
}

func (s *originSet) add(origin string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.origins == nil {
		s.origins = make(map[string]struct{})
	}
	s.origins[origin] = struct{}{}
}

func (s *originSet) allowAny() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.any = true
}

func (s *originSet) has(origin string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.origins[origin]
	return ok || s.any
}

// AllowOrigin lets requests (and redirects) go to origin, given as
// "scheme://host[:port]", as any URL on that origin, or as a bare
// "host[:port]", which allows both http and https on it. By default every
// origin is refused except the credential origin. An unusable origin is
// logged and ignored.
func (c *Client) AllowOrigin(allowed string) {
	candidates := []string{allowed}
	if !strings.Contains(allowed, "://") {
		candidates = []string{"https://" + allowed, "http://" + allowed}
	}
	for _, candidate := range candidates {
		o, err := httpOrigin(candidate)
		if err != nil {
			c.log.Warn("fetch: origin not allowed", "origin", candidate, "err", err)
			return
		}
		c.origins.add(o)
	}
}

// AllowAnyOrigin lifts the host policy: every http and https origin is
// allowed. Credentials still go only to the credential origin.
func (c *Client) AllowAnyOrigin() { c.origins.allowAny() }

// Allowed reports whether requests to rawURL are allowed by the host policy.
func (c *Client) Allowed(rawURL string) bool {
	o, err := httpOrigin(rawURL)
	return err == nil && c.origins.has(o)
}

// sendsCredentials reports whether the credential headers go to rawURL.
func (c *Client) sendsCredentials(rawURL string) bool {
	if c.credOrigin == "" || len(c.opts.Headers) == 0 {
		return false
	}
	o, err := httpOrigin(rawURL)
	return err == nil && o == c.credOrigin
}
