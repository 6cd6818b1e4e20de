package source

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"rsfs/tests/golden"
)

// TestReportMatchesGolden: each report of testdata/*.in.json, rendered as
// `rsfs inspect` prints it, as text and as JSON, is byte for byte the
// golden file beside it (NAME.txt, NAME.json), first made with the
// renderers when they were in cmd/rsfs (RSFS_UPDATE_GOLDEN=1 writes them).
func TestReportMatchesGolden(t *testing.T) {
	golden.Reports[Report](t)
}

// TestReportCountsWhatStrictFailsOn: inspect --strict fails on documents
// not read (discovery's, a failed document's, an index's failed child) and
// on bad packages (one not opened, one whose manifest names a member it
// lacks).
func TestReportCountsWhatStrictFailsOn(t *testing.T) {
	rep := golden.Input[Report](t, "testdata/report.in.json")
	assert.Equal(t, 3, rep.Unread())
	assert.Equal(t, 2, rep.BadPackages())
	rep.Sets[0].Packages[0].Matched = 4
	assert.Equal(t, 1, rep.BadPackages(), "every member matched")
}
