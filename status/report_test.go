package status

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/golden"
)

// rsfsHints are the flags cmd/rsfs gives (its statusHints).
var rsfsHints = Hints{NoFollow: "--poll-interval 0", NoDisk: "--cache-dir none", MaxRate: "--max-rate", Offline: "--offline", Timeout: "--timeout"}

// TestReportTextMatchesGolden: `rsfs status` of a mount with every field
// filled in (offline, degraded, held, throttled, with a disk cache) says
// what testdata/report.txt says, byte for byte (RSFS_UPDATE_GOLDEN=1
// writes it).
func TestReportTextMatchesGolden(t *testing.T) {
	rep := golden.Input[Report](t, "testdata/report.in.json")
	var got bytes.Buffer
	require.NoError(t, rep.WriteText(&got, rsfsHints))
	golden.Compare(t, "testdata/report.txt", got.Bytes())
}

// everyBranch is a report that takes every branch of its text that could
// name a flag: not following, no disk cache, an origin throttled under a
// cap and one without.
func everyBranch() *Report {
	now := time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)
	return &Report{Source: "http://h/", Origin: "http://h", Now: now, Started: now, PollInterval: "0s",
		Throttled: []ThrottleReport{{Origin: "http://h", Answers: 1, Limit: 1, MaxRate: 5}, {Origin: "http://m", Answers: 1, Limit: 1}}}
}

// fixes are the Fix of a mount offline by choice and of a hung Source,
// named in the words of h.
func fixes(h Hints) []string {
	var r Reachability
	off := Offline{Offline: true, Since: time.Now(), Err: "no answer", Timeout: 30 * time.Second}
	forced, hang := off, off
	forced.Forced, hang.Hang = true, true
	return []string{r.report(Polling{}, forced, h).Fix, r.report(Polling{}, hang, h).Fix}
}

// The status names no flag but those it is given (status knows none:
// cmd/rsfs gives them), and with cmd/rsfs's it says what it always said.
func TestReportNamesOnlyTheFlagsItIsGiven(t *testing.T) {
	var text strings.Builder
	require.NoError(t, everyBranch().WriteText(&text, Hints{}))
	assert.NotRegexp(t, `--[a-z]`, text.String())
	assert.Contains(t, text.String(), "Following:  off\n")
	assert.Contains(t, text.String(), "            disk: none\n")
	assert.Contains(t, text.String(), "(limit 1)\n  http://m: throttled by the Source: 1 answers 429/503 in the last minute; 0 requests in flight (limit 1)\n")
	for _, fix := range fixes(Hints{}) {
		assert.NotRegexp(t, `--[a-z]`, fix)
		assert.NotEmpty(t, fix)
	}

	text.Reset()
	require.NoError(t, everyBranch().WriteText(&text, rsfsHints))
	for _, line := range []string{
		"Following:  off (--poll-interval 0)\n",
		"            disk: none (--cache-dir none)\n",
		"  http://h: throttled by the Source: 1 answers 429/503 in the last minute; 0 requests in flight (limit 1) (--max-rate 5)\n",
		"  http://m: throttled by the Source: 1 answers 429/503 in the last minute; 0 requests in flight (limit 1) (--max-rate sets a lower rate from the start)\n",
	} {
		assert.Contains(t, text.String(), line)
	}
	assert.Equal(t, []string{
		"mounted --offline: nothing is asked of the Source; remount without --offline to reach it",
		"the Source accepts connections but sends no answer within --timeout (30s): a hung server, or a proxy or firewall holding connections; have the server or the network path fixed (raising --timeout only makes each wait longer); files on disk are served meanwhile",
	}, fixes(rsfsHints))
}
