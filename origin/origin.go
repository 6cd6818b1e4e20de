// Package origin gives a URL's origin (RFC 6454: scheme, host, port) one
// canonical form, "scheme://host[:port]", used wherever rsfs stores or
// compares origins: the host policy of fetch, a Source's origin, the path
// mapping and snapshots of catalog. In that form the scheme and the host are
// in lower case, user info is dropped, and the scheme's default port is left
// out (http://example.org:80/x and HTTP://Example.org/ are both
// "http://example.org").
package origin

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ErrNoOrigin: the URL is relative or names no host.
var ErrNoOrigin = errors.New("no scheme and host")

// Of returns the canonical origin of an absolute URL.
func Of(rawURL string) (string, error) {
	if o, ok := plainOrigin(rawURL); ok {
		return o, nil
	}
	return parsedOrigin(rawURL)
}

// parsedOrigin is Of through url.Parse: every URL, at its cost.
func parsedOrigin(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("origin of %q: %w", rawURL, err)
	}
	if u.Scheme == "" || u.Hostname() == "" {
		return "", fmt.Errorf("origin of %q: %w", rawURL, ErrNoOrigin)
	}
	o, _ := FromAuthority(u.Scheme, u.Host)
	return o, nil
}

// plainOrigin returns the origin of a URL of the plain shape nearly every
// URL a Source publishes has, "http[s]://host[:port][/...]" with a host of
// letters, digits, dots and hyphens, a port of digits, and no control
// byte or percent sign after it, and true. For any other URL it says
// false, and Of parses it in full. Of runs several times per request; on
// each URL this accepts it agrees with url.Parse (FuzzOf), at under a
// quarter of the cost and with no allocation when the URL's origin is
// already canonical (it is then a substring of the URL).
func plainOrigin(raw string) (string, bool) {
	var scheme string
	switch {
	case strings.HasPrefix(raw, "http://"):
		scheme = "http"
	case strings.HasPrefix(raw, "https://"):
		scheme = "https"
	default:
		return "", false
	}
	rest := raw[len(scheme)+len("://"):]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority := rest[:end]
	lower, ok := plainAuthority(authority)
	if !ok {
		return "", false
	}
	for i := end; i < len(rest); i++ {
		if c := rest[i]; c < ' ' || c == 0x7f || c == '%' {
			return "", false
		}
	}
	if lower && !strings.HasSuffix(authority, ":"+DefaultPort(scheme)) {
		return raw[:len(raw)-len(rest)+end], true // already canonical
	}
	o, _ := FromAuthority(scheme, authority)
	return o, true
}

// plainAuthority says whether a is host[:port], the host not empty and of
// letters, digits, dots and hyphens, the port (if the colon is there) of
// at least one digit; and whether the host is in lower case already.
func plainAuthority(a string) (lower, ok bool) {
	host, port, hasPort := strings.Cut(a, ":")
	if host == "" || hasPort && port == "" {
		return false, false
	}
	lower = true
	for i := 0; i < len(host); i++ {
		switch c := host[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '.', c == '-':
		case 'A' <= c && c <= 'Z':
			lower = false
		default:
			return false, false
		}
	}
	for i := 0; i < len(port); i++ {
		if c := port[i]; c < '0' || c > '9' {
			return false, false
		}
	}
	return lower, true
}

// FromAuthority returns the canonical origin of a URL given its scheme and
// its authority ("[user@]host[:port]", as it stands between "//" and the
// path), and that origin's "host[:port]" alone. It does not validate: it is
// for URIs already split, where it runs once per resource.
func FromAuthority(scheme, authority string) (origin, hostPort string) {
	scheme = strings.ToLower(scheme)
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		authority = authority[i+1:]
	}
	host, port := authority, ""
	if i := strings.LastIndexByte(authority, ':'); i >= 0 && !strings.Contains(authority[i:], "]") {
		host, port = authority[:i], authority[i+1:]
	}
	host = strings.ToLower(host)
	if port == "" || port == DefaultPort(scheme) {
		hostPort = host
	} else {
		hostPort = host + ":" + port
	}
	return scheme + "://" + hostPort, hostPort
}

// DefaultPort returns the port a URL of scheme (in lower case) has when it
// names none, or "" if rsfs knows no default for the scheme.
func DefaultPort(scheme string) string {
	switch scheme {
	case "http", "ws":
		return "80"
	case "https", "wss":
		return "443"
	case "ftp":
		return "21"
	}
	return ""
}

// StripUserinfo removes the user information (user:password@) from the
// authority of rawURL (rsfs never sends it, and never logs it), and returns the URL without it, its host (port
// included) and true; a URL without user information is returned as is,
// with false. The rest of the URL is kept byte for byte.
func StripUserinfo(rawURL string) (string, string, bool) {
	if strings.IndexByte(rawURL, '@') < 0 {
		return rawURL, "", false
	}
	i := strings.Index(rawURL, "//")
	if i < 0 || strings.ContainsAny(rawURL[:i], "/?#") {
		return rawURL, "", false
	}
	start := i + 2
	end := len(rawURL)
	if j := strings.IndexAny(rawURL[start:], "/?#"); j >= 0 {
		end = start + j
	}
	at := strings.LastIndexByte(rawURL[start:end], '@')
	if at < 0 {
		return rawURL, "", false
	}
	return rawURL[:start] + rawURL[start+at+1:], rawURL[start+at+1 : end], true
}
