package status

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReportTextMatchesGolden: `rsfs status` of a mount with every field
// filled in (offline, degraded, held, throttled, with a disk cache) says
// what testdata/report.txt says, byte for byte (RSFS_UPDATE_GOLDEN=1
// writes it).
func TestReportTextMatchesGolden(t *testing.T) {
	in, err := os.ReadFile("testdata/report.in.json")
	require.NoError(t, err)
	var rep Report
	require.NoError(t, json.Unmarshal(in, &rep))
	var got bytes.Buffer
	require.NoError(t, rep.WriteText(&got))
	if os.Getenv("RSFS_UPDATE_GOLDEN") != "" {
		require.NoError(t, os.WriteFile("testdata/report.txt", got.Bytes(), 0o644))
	}
	want, err := os.ReadFile("testdata/report.txt")
	require.NoError(t, err)
	assert.Equal(t, string(want), got.String())
}
