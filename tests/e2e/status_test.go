package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

// status is the part of `rsfs status --json` the tests read.
type status struct {
	Source    string `json:"source"`
	Protocol  string `json:"protocol"`
	Dir       string `json:"dir"`
	PID       int    `json:"pid"`
	Resources int    `json:"resources"`
	Sets      []struct {
		Set           string    `json:"set"`
		Position      time.Time `json:"position"`
		NewestChange  time.Time `json:"newest_change"`
		BehindSeconds float64   `json:"behind_seconds"`
		Resources     int       `json:"resources"`
		NoBaseline    bool      `json:"no_baseline"`
	} `json:"sets"`
	Polls struct {
		Count   int64      `json:"count"`
		Applied int64      `json:"changes_applied"`
		Last    *time.Time `json:"last"`
		Result  string     `json:"last_result"`
		Next    *time.Time `json:"next"`
	} `json:"polls"`
	Hold *struct {
		Until time.Time `json:"until"`
	} `json:"hold"`
	Cache struct {
		Memory struct {
			Bytes   int64  `json:"bytes"`
			Hits    uint64 `json:"hits"`
			Lookups uint64 `json:"lookups"`
		} `json:"memory"`
		Disk *struct {
			Blocks int `json:"blocks"`
		} `json:"disk"`
	} `json:"cache"`
	Fetched []struct {
		Origin   string `json:"origin"`
		Requests int64  `json:"requests"`
		Bytes    int64  `json:"bytes"`
	} `json:"fetched"`
	Verification failures `json:"verification_failures"`
	ReadErrors   failures `json:"read_errors"`
}

type failures struct {
	Total    int `json:"total"`
	InWindow int `json:"in_window"`
	Latest   []struct {
		Reason string `json:"reason"`
	} `json:"latest"`
}

func readStatus(t *testing.T, dir string) status {
	t.Helper()
	out, stderr, err := run(t, 10*time.Second, rsfsBin, "status", "--json", dir)
	require.NoError(t, err, stderr)
	var st status
	require.NoError(t, json.Unmarshal([]byte(out), &st), out)
	return st
}

func TestStatusOfAFollowingMount(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 20, Hashes: []string{"sha-256"}})
	m := mount(t, src.URL(), pollFlags...)
	files := walkFiles(t, m.dir)
	var size int64
	for _, r := range src.Resources() {
		got, err := os.ReadFile(files[r.URI])
		require.NoError(t, err)
		size += int64(len(got))
	}
	r := src.Resources()[2]
	require.NoError(t, src.Update(r.URI, []byte("updated for status\n")))
	eventually(t, "the update", func() bool {
		got, err := os.ReadFile(files[r.URI])
		return err == nil && string(got) == "updated for status\n"
	})
	updated, _ := src.Lookup(r.URI)
	var st status
	eventually(t, "a poll after the update", func() bool {
		st = readStatus(t, m.dir)
		return st.Polls.Last != nil && !st.Polls.Last.Before(updated.Lastmod)
	})
	assert.Equal(t, src.URL(), st.Source)
	assert.Equal(t, m.dir, st.Dir)
	assert.Equal(t, m.pid(t), st.PID)
	assert.Equal(t, 20, st.Resources)
	require.Len(t, st.Sets, 1)
	assert.Equal(t, updated.Lastmod.UTC(), st.Sets[0].Position, "position: the update's time")
	assert.Equal(t, updated.Lastmod.UTC(), st.Sets[0].NewestChange)
	assert.Zero(t, st.Sets[0].BehindSeconds)
	assert.Equal(t, "ok", st.Polls.Result)
	assert.Equal(t, int64(1), st.Polls.Applied)
	require.NotNil(t, st.Polls.Next, "%+v", st)
	assert.True(t, st.Polls.Next.After(*st.Polls.Last))
	assert.Nil(t, st.Hold)
	require.Len(t, st.Fetched, 1)
	assert.Equal(t, strings.TrimSuffix(src.URL(), "/"), st.Fetched[0].Origin)
	assert.GreaterOrEqual(t, st.Fetched[0].Bytes, size, "every file's bytes were fetched")
	// Every request the Source saw is counted. The polls go on, so the
	// Source's counters are read before the status, and again until a
	// request the Source has seen but whose answer rsfs has not yet read
	// (it counts on the answer) has ended.
	var seen, counted int64
	eventually(t, "the status to count every request the Source saw", func() bool {
		c := src.Counters()
		seen = c.Docs() + c.WholeGets + c.RangeGets + c.Heads
		st := readStatus(t, m.dir)
		counted = st.Fetched[0].Requests
		return counted >= seen
	})
	assert.GreaterOrEqual(t, counted, seen)
	assert.Positive(t, st.Cache.Memory.Bytes)
	require.NotNil(t, st.Cache.Disk)
	assert.Zero(t, st.ReadErrors.Total)

	_, stderr, err := run(t, 10*time.Second, rsfsBin, "hold", m.dir, "--for", "1h")
	require.NoError(t, err, stderr)
	st = readStatus(t, m.dir)
	require.NotNil(t, st.Hold)
	assert.WithinDuration(t, time.Now().Add(time.Hour), st.Hold.Until, time.Minute)

	out, stderr, err := run(t, 10*time.Second, rsfsBin, "status", m.dir)
	require.NoError(t, err, stderr)
	t.Logf("rsfs status %s:\n%s", m.dir, out)
	assert.Contains(t, out, "Source:     "+src.URL()+" ")
	assert.Contains(t, out, "Hold:       changes held back until ")
	assert.Contains(t, out, "Last poll:  ")
}

func TestStatusCountsAFailedReadLoggedOnce(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 10, Hashes: []string{"sha-256"}})
	bad := src.Resources()[3]
	body, _ := src.Body(bad.URI)
	wrong := append([]byte{}, body...)
	wrong[0] ^= 0xff
	src.Corrupt(bad.URI, wrong)
	m := mount(t, src.URL())
	files := walkFiles(t, m.dir)
	_, err := os.ReadFile(files[bad.URI])
	require.ErrorIs(t, err, syscall.EIO)

	// The kernel may ask again for pages a read failed on (it retries a
	// failed page read, and reads again after rsfs drops the version's
	// pages): one read(2) is one or a few failed reads for rsfs.
	st := readStatus(t, m.dir)
	assert.Positive(t, st.ReadErrors.InWindow, "%+v", st.ReadErrors)
	require.NotEmpty(t, st.ReadErrors.Latest)
	assert.Contains(t, st.ReadErrors.Latest[0].Reason, "sha-256 mismatch")
	assert.Positive(t, st.Verification.InWindow, "%+v", st.Verification)
	assert.LessOrEqual(t, st.Verification.InWindow, st.ReadErrors.InWindow, "no check without a read here")
	require.NotEmpty(t, st.Verification.Latest)
	assert.Contains(t, st.Verification.Latest[0].Reason, bad.URI)

	log, err := os.ReadFile(m.logFile)
	require.NoError(t, err)
	errorLines := 0
	for _, line := range strings.Split(string(log), "\n") {
		if strings.Contains(line, "level=ERROR") && strings.Contains(line, bad.URI) {
			errorLines++
		}
	}
	assert.Equal(t, 1, errorLines, "one line for one failed read:\n%s", log)
}

func TestStatusOfADirectoryThatIsNoMount(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, stderr, err := run(t, 10*time.Second, rsfsBin, "status", dir)
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 1, exit.ExitCode())
	assert.Equal(t, "rsfs: "+dir+" is not the root of an rsfs mount\n", stderr)
}
