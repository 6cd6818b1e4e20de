package atomfeed

import (
	"testing"

	"github.com/stretchr/testify/assert"

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
	rep := golden.Input[Report](t, "testdata/report.in.json")
	assert.Equal(t, 1, rep.Unread())
}
