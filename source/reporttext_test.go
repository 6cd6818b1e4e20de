package source

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReportMatchesGolden: each report of testdata/*.in.json, rendered as
// `rsfs inspect` prints it, as text and as JSON, is byte for byte the
// golden file beside it (NAME.txt, NAME.json), first made with the
// renderers when they were in cmd/rsfs (RSFS_UPDATE_GOLDEN=1 writes them).
func TestReportMatchesGolden(t *testing.T) {
	ins, err := filepath.Glob("testdata/*.in.json")
	require.NoError(t, err)
	require.NotEmpty(t, ins)
	for _, in := range ins {
		data, err := os.ReadFile(in)
		require.NoError(t, err)
		var rep Report
		require.NoError(t, json.Unmarshal(data, &rep))
		var text, js bytes.Buffer
		require.NoError(t, rep.WriteText(&text))
		require.NoError(t, rep.WriteJSON(&js))
		base := strings.TrimSuffix(in, ".in.json")
		for name, got := range map[string][]byte{base + ".txt": text.Bytes(), base + ".json": js.Bytes()} {
			if os.Getenv("RSFS_UPDATE_GOLDEN") != "" {
				require.NoError(t, os.WriteFile(name, got, 0o644))
			}
			want, err := os.ReadFile(name)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got), name)
		}
	}
}

// TestReportCountsWhatStrictFailsOn: inspect --strict fails on documents
// not read (discovery's, a failed document's, an index's failed child) and
// on bad packages (one not opened, one whose manifest names a member it
// lacks).
func TestReportCountsWhatStrictFailsOn(t *testing.T) {
	data, err := os.ReadFile("testdata/report.in.json")
	require.NoError(t, err)
	var rep Report
	require.NoError(t, json.Unmarshal(data, &rep))
	assert.Equal(t, 3, rep.Unread())
	assert.Equal(t, 2, rep.BadPackages())
	rep.Sets[0].Packages[0].Matched = 4
	assert.Equal(t, 1, rep.BadPackages(), "every member matched")
}
