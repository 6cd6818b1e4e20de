package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

// TestPollNow: a publisher changes the Source and runs `rsfs poll DIR`,
// which returns once the mount polled, saying what it applied; the change
// is then in the tree, without waiting for --poll-interval (an hour here).
// While changes are held back it polls nothing and fails.
func TestPollNow(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 10})
	m := mount(t, src.URL(), append(allowOtherHost(src), "--poll-interval", "1h")...)
	res := src.Resources()
	// The tree, but no bytes: a read would warm its neighbours in the
	// background, and one found changed asks for an early poll of its own.
	files := walkFiles(t, m.dir)

	newBody := []byte("published a minute ago\n")
	require.NoError(t, src.Update(res[2].URI, newBody))
	require.NoError(t, src.Delete(res[3].URI))
	docs := src.Counters().Docs()
	out, stderr, err := run(t, time.Minute, rsfsBin, "poll", m.dir)
	t.Logf("rsfs poll %s:\n%s%s", m.dir, out, stderr)
	require.NoError(t, err, stderr)
	assert.Regexp(t, `^polled `+src.URL()+` in [0-9.]+m?s: 2 changes applied; 9 resources at `+m.dir+"\n", out)
	assert.Contains(t, out, "  set "+src.URL())
	assert.Positive(t, src.Counters().Docs()-docs, "the poll read the Change List")
	got, err := os.ReadFile(files[res[2].URI])
	require.NoError(t, err)
	assert.Equal(t, string(newBody), string(got))
	_, err = os.Stat(files[res[3].URI])
	assert.ErrorIs(t, err, os.ErrNotExist)

	// Nothing new: nothing applied; --json says the same.
	out, _, err = run(t, time.Minute, rsfsBin, "poll", "--json", m.dir)
	require.NoError(t, err)
	var rep struct {
		Applied int64  `json:"changes_applied"`
		Error   string `json:"error"`
		Started time.Time
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	assert.Zero(t, rep.Applied)
	assert.Empty(t, rep.Error)
	assert.False(t, rep.Started.IsZero())

	// Held: no poll, exit status 1, and why.
	_, stderr, err = run(t, 10*time.Second, rsfsBin, "hold", m.dir, "--for", "1h")
	require.NoError(t, err, stderr)
	docs = src.Counters().Docs()
	_, stderr, err = run(t, time.Minute, rsfsBin, "poll", m.dir)
	require.Error(t, err)
	assert.Equal(t, "rsfs: no poll of "+src.URL()+": changes are held back (rsfs hold): no poll until they are released (rsfs release)\n", stderr)
	assert.Equal(t, docs, src.Counters().Docs(), "no request while held")

	// Not a mount.
	_, stderr, err = run(t, 10*time.Second, rsfsBin, "poll", t.TempDir())
	require.Error(t, err)
	assert.True(t, strings.HasSuffix(stderr, " is not the root of an rsfs mount\n"), stderr)
}
