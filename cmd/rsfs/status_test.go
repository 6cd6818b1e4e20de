package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/status"
)

// `rsfs status` names rsfs's flags where one would change what it says:
// a mount not following, one without a disk cache, an origin throttled
// under --max-rate and one without (the status package knows no flag).
func TestStatusTextNamesTheFlags(t *testing.T) {
	data := `{"source":"http://h/","origin":"http://h","poll_interval":"0s","cache":{"disk":null},
		"throttled":[{"origin":"http://h","answers":1,"limit":1,"max_rate":5},{"origin":"http://m","answers":1,"limit":1}]}`
	var out strings.Builder
	require.NoError(t, status.WriteTextOf(&out, []byte(data), statusHints()))
	for _, line := range []string{
		"Following:  off (--poll-interval 0)\n",
		"            disk: none (--cache-dir none)\n",
		" (limit 1) (--max-rate 5)\n",
		" (limit 1) (--max-rate sets a lower rate from the start)\n",
	} {
		assert.Contains(t, out.String(), line)
	}
	assert.ErrorContains(t, status.WriteTextOf(&out, []byte("{"), statusHints()), "read the report: ")
}

type idleFollower struct{}

func (idleFollower) Status() status.Follow { return status.Follow{} }

// The mount's status names --offline and --timeout in its fix, as
// `rsfs status --json` shows it.
func TestStatusFixNamesTheFlags(t *testing.T) {
	off := status.Offline{Offline: true, Since: time.Now(), Err: "no answer", Timeout: 30 * time.Second}
	m := &status.Mount{Follower: idleFollower{}, Count: func() int { return 0 },
		Cache: func() status.CacheReport { return status.CacheReport{} }, Fetched: func() []status.OriginReport { return nil },
		Verification: (&status.Events{}).Since, ReadErrors: (&status.Events{}).Since,
		HeldUntil: func(string) (time.Time, bool) { return time.Time{}, false },
		Offline:   func() status.Offline { return off }, Hints: statusHints()}
	off.Forced = true
	assert.Equal(t, "mounted --offline: nothing is asked of the Source; remount without --offline to reach it", m.Report().Unreachable.Fix)
	off.Forced, off.Hang = false, true
	assert.Contains(t, m.Report().Unreachable.Fix, "no answer within --timeout (30s): ")
	assert.Contains(t, m.Report().Unreachable.Fix, " (raising --timeout only makes each wait longer); ")
}
