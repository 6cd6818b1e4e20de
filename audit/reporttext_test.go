package audit

import (
	"testing"

	"rsfs/tests/golden"
)

// TestReportMatchesGolden: each report of testdata/*.in.json, rendered as
// `rsfs audit` prints it, as text and as JSON, is byte for byte the
// golden file beside it (NAME.txt, NAME.json), first made with the
// renderers when they were in cmd/rsfs (RSFS_UPDATE_GOLDEN=1 writes them).
func TestReportMatchesGolden(t *testing.T) {
	golden.Reports[Report](t)
}
