package origin

import (
	"fmt"
	"net/url"
	"strings"
)

// CheckURL checks a Source's URL: http or https, with a host. A URL
// without a scheme (a bare host:port) is an error that says what was
// probably meant: `"127.0.0.1:8080" is not an http(s) URL (did you mean
// http://127.0.0.1:8080/?)`.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Hostname() != "" {
		return nil
	}
	if !strings.Contains(raw, "://") && !strings.HasPrefix(raw, "/") && !strings.HasPrefix(raw, ".") && raw != "" {
		guess := "http://" + raw
		if !strings.Contains(raw, "/") {
			guess += "/"
		}
		if g, err := url.Parse(guess); err == nil && g.Hostname() != "" {
			return fmt.Errorf("%q is not an http(s) URL (did you mean %s?)", raw, guess)
		}
	}
	return fmt.Errorf("%q is not an http(s) URL (e.g. https://data.example.org/)", raw)
}
