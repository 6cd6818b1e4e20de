package atomfeed

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/golden"
)

// TestReportMatchesGolden: each report of testdata/*.in.json, rendered as
// `rsfs inspect of a feed` prints it, as text and as JSON, is byte for byte the
// golden file beside it (NAME.txt, NAME.json), first made with the
// renderers when they were in cmd/rsfs (RSFS_UPDATE_GOLDEN=1 writes them).
func TestReportMatchesGolden(t *testing.T) {
	golden.Reports[Report](t)
}

func TestReportCountsUnreadDocuments(t *testing.T) {
	data, err := os.ReadFile("testdata/report.in.json")
	require.NoError(t, err)
	var rep Report
	require.NoError(t, json.Unmarshal(data, &rep))
	assert.Equal(t, 1, rep.Unread())
}
