package e2e

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/publishers"
)

// resync-client's dump fixture: a Resource Dump given as the URL, no
// Resource List, its completed earlier than its at and its manifest dated
// before both. Its copies are mounted, and the inverted range is a warning.
func TestDumpOnlySourceMountsItsCopiesWhateverItsTimes(t *testing.T) {
	t.Parallel()
	d, err := publishers.NewResyncClientDump()
	require.NoError(t, err)
	t.Cleanup(d.Close)
	m := mount(t, d.DumpURL(), "--poll-interval", "0")
	pubSameTree(t, m, d.State, "the dump's two resources")
	log, err := os.ReadFile(m.logFile)
	require.NoError(t, err)
	assert.Contains(t, string(log), "tolerated: completed earlier than at: at 2015-05-22T16:06:04Z, completed 2015-05-05T16:23:20Z")
	assert.NotContains(t, string(log), "not mounted", "no copy is left out")
	out, stderr, err := run(t, hangBound, rsfsBin, "inspect", d.DumpURL())
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "completed earlier than at")
}
