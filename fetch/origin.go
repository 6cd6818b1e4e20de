package fetch

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
)

// Origin normalises rawURL's origin to "scheme://host:port": scheme and host
// lower-cased, the default port (80 for http, 443 for https) made explicit.
// Only http and https are accepted.
func Origin(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("fetch: origin of %q: %w", rawURL, err)
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	switch {
	case scheme != "http" && scheme != "https":
		return "", fmt.Errorf("fetch: origin of %q: scheme must be http or https", rawURL)
	case u.Hostname() == "":
		return "", fmt.Errorf("fetch: origin of %q: no host", rawURL)
	case port == "" && scheme == "http":
		port = "80"
	case port == "":
		port = "443"
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port), nil
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
func (c *Client) AllowOrigin(origin string) {
	candidates := []string{origin}
	if !strings.Contains(origin, "://") {
		candidates = []string{"https://" + origin, "http://" + origin}
	}
	for _, candidate := range candidates {
		o, err := Origin(candidate)
		if err != nil {
			c.log.Warn("fetch: origin not allowed", "origin", origin, "err", err)
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
	o, err := Origin(rawURL)
	return err == nil && c.origins.has(o)
}

// sendsCredentials reports whether the credential headers go to rawURL.
func (c *Client) sendsCredentials(rawURL string) bool {
	if c.credOrigin == "" || len(c.opts.Headers) == 0 {
		return false
	}
	o, err := Origin(rawURL)
	return err == nil && o == c.credOrigin
}
