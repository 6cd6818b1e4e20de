package follow

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFailureLogBacksOffAndSaysWhenItRecovers(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	var l failureLog
	for range 10 {
		l.log(log, errors.New("poll change list: 503"))
	}
	l.log(log, nil)
	l.log(log, nil)
	l.log(log, errors.New("poll change list: 503"))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var got []string
	for _, line := range lines {
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "failed_polls=") {
				got = append(got, strings.TrimPrefix(f, "failed_polls="))
			}
		}
	}
	assert.Len(t, lines, 6)
	assert.Equal(t, []string{"1", "2", "4", "8", "10", "1"}, got)
	assert.Contains(t, lines[4], "following changes again")
}
