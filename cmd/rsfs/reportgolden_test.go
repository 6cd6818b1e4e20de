package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"rsfs/atomfeed"
	"rsfs/audit"
	"rsfs/report"
	"rsfs/source"
)

// TestReportsMatchGolden renders the reports of testdata/*.in.json in
// source, atomfeed and audit, as text and JSON, and compares them with the
// golden files beside them (RSFS_UPDATE_GOLDEN=1 writes them).
func TestReportsMatchGolden(t *testing.T) {
	render := map[string]func(t *testing.T, in []byte) (text, js []byte){
		"../../source/testdata": func(t *testing.T, in []byte) ([]byte, []byte) {
			var rep source.Report
			require.NoError(t, json.Unmarshal(in, &rep))
			var text, js bytes.Buffer
			printReport(&text, &rep)
			require.NoError(t, report.JSON(&js, &rep))
			return text.Bytes(), js.Bytes()
		},
		"../../atomfeed/testdata": func(t *testing.T, in []byte) ([]byte, []byte) {
			var rep atomfeed.Report
			require.NoError(t, json.Unmarshal(in, &rep))
			var text, js bytes.Buffer
			cmd := &cobra.Command{}
			cmd.SetOut(&text)
			printFeedReport(cmd, &rep)
			require.NoError(t, report.JSON(&js, &rep))
			return text.Bytes(), js.Bytes()
		},
		"../../audit/testdata": func(t *testing.T, in []byte) ([]byte, []byte) {
			var rep audit.Report
			require.NoError(t, json.Unmarshal(in, &rep))
			var text, js bytes.Buffer
			require.NoError(t, writeAudit(&text, &rep, false))
			require.NoError(t, writeAudit(&js, &rep, true))
			return text.Bytes(), js.Bytes()
		},
	}
	for dir, fn := range render {
		ins, err := filepath.Glob(filepath.Join(dir, "*.in.json"))
		require.NoError(t, err)
		require.NotEmpty(t, ins, dir)
		for _, in := range ins {
			data, err := os.ReadFile(in)
			require.NoError(t, err)
			text, js := fn(t, data)
			base := strings.TrimSuffix(in, ".in.json")
			for name, got := range map[string][]byte{base + ".txt": text, base + ".json": js} {
				if os.Getenv("RSFS_UPDATE_GOLDEN") != "" {
					require.NoError(t, os.WriteFile(name, got, 0o644))
					continue
				}
				want, err := os.ReadFile(name)
				require.NoError(t, err)
				require.Equal(t, string(want), string(got), name)
			}
		}
	}
}
