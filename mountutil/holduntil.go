package mountutil

import (
	"os"
	"strings"
	"time"
)

// HeldUntil returns when the hold of the hold file at path ends, and
// whether there is one now. Unlike Held it changes nothing.
func HeldUntil(path string) (time.Time, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}, false
	}
	until, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(data)))
	if err != nil || !time.Now().Before(until) {
		return time.Time{}, false
	}
	return until, true
}
