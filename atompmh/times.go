package atompmh

import (
	"errors"
	"strings"
	"time"
)

// errNoZone is returned by ParseTime with a time read as UTC.
var errNoZone = errors.New("datetime without time zone; UTC assumed")

// ParseTime reads an RFC 3339 date-time (atom:updated) and returns it in
// UTC. Lower-case t and z are accepted, as RFC 3339 allows. A date-time
// without a zone is returned as UTC with an error wrapping errNoZone (the
// caller warns); anything else unreadable is an error and the zero time.
func ParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if len(s) > 10 && (s[10] == 't') {
		s = s[:10] + "T" + s[11:]
	}
	if strings.HasSuffix(s, "z") {
		s = s[:len(s)-1] + "Z"
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err == nil {
		return t.UTC(), nil
	}
	if t2, err2 := time.Parse("2006-01-02T15:04:05.999999999", s); err2 == nil {
		return t2.UTC(), errNoZone
	}
	return time.Time{}, errors.New("not an RFC 3339 date-time: " + quoteShort(s))
}

// quoteShort quotes s for a message, cut to 64 bytes.
func quoteShort(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return `"` + s + `"`
}
