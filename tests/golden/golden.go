// Package golden is for tests only: it checks what a renderer writes
// against the golden file that holds it, byte for byte, and with
// RSFS_UPDATE_GOLDEN set writes the golden file first
// (RSFS_UPDATE_GOLDEN=1 go test ./status/ remakes status's). No code but
// tests imports it (tests/design's import graph would show it).
package golden

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Update is the variable that makes Compare write the golden files.
const Update = "RSFS_UPDATE_GOLDEN"

// Compare checks that got is the golden file name, byte for byte, having
// written it there first if Update is set.
func Compare(t testing.TB, name string, got []byte) {
	t.Helper()
	if os.Getenv(Update) != "" {
		require.NoError(t, os.WriteFile(name, got, 0o644))
	}
	want, err := os.ReadFile(name)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), name)
}

// Input is the test input name, a JSON document, decoded into an R.
func Input[R any](t testing.TB, name string) *R {
	t.Helper()
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	v := new(R)
	require.NoError(t, json.Unmarshal(data, v), name)
	return v
}

// Report is a report that renders itself, as text and as JSON.
type Report interface {
	WriteText(io.Writer) error
	WriteJSON(io.Writer) error
}

// Reports checks each report of testdata/*.in.json, decoded into an R and
// rendered as text and as JSON, against the golden files beside it
// (NAME.txt, NAME.json); there must be one.
func Reports[R any, P interface {
	*R
	Report
}](t testing.TB) {
	t.Helper()
	reports[R, P](t, "testdata")
}

func reports[R any, P interface {
	*R
	Report
}](t testing.TB, dir string) {
	t.Helper()
	ins, err := filepath.Glob(filepath.Join(dir, "*.in.json"))
	require.NoError(t, err)
	require.NotEmpty(t, ins)
	for _, in := range ins {
		rep := P(Input[R](t, in))
		var text, js bytes.Buffer
		require.NoError(t, rep.WriteText(&text))
		require.NoError(t, rep.WriteJSON(&js))
		base := strings.TrimSuffix(in, ".in.json")
		Compare(t, base+".txt", text.Bytes())
		Compare(t, base+".json", js.Bytes())
	}
}
