package golden

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder is a testing.TB that records a failure instead of failing.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()                       {}
func (r *recorder) Errorf(string, ...interface{}) { r.failed = true }
func (r *recorder) FailNow()                      { r.failed = true; panic(r) }

// fails reports whether check failed the test it was given.
func fails(t *testing.T, check func(testing.TB)) (failed bool) {
	r := &recorder{TB: t}
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
		failed = r.failed
	}()
	check(r)
	return r.failed
}

type fakeReport struct {
	Name string `json:"name"`
}

func (f *fakeReport) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "name: %s\n", f.Name)
	return err
}
func (f *fakeReport) WriteJSON(w io.Writer) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// A file the same byte for byte passes; one byte different fails; with
// RSFS_UPDATE_GOLDEN set it is written, then passes.
func TestCompare(t *testing.T) {
	name := filepath.Join(t.TempDir(), "x.txt")
	require.NoError(t, os.WriteFile(name, []byte("a\n"), 0o644))
	assert.False(t, fails(t, func(tb testing.TB) { Compare(tb, name, []byte("a\n")) }))
	assert.True(t, fails(t, func(tb testing.TB) { Compare(tb, name, []byte("a")) }))
	assert.True(t, fails(t, func(tb testing.TB) { Compare(tb, name+".missing", []byte("a\n")) }))

	t.Setenv(Update, "1")
	assert.False(t, fails(t, func(tb testing.TB) { Compare(tb, name, []byte("b\n")) }))
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	assert.Equal(t, "b\n", string(data))
}

// Reports renders testdata/one.in.json as text and as JSON, and checks
// both against one.txt and one.json: a golden text or JSON one byte off
// fails it, and so does a directory without a report.
func TestReports(t *testing.T) {
	assert.False(t, fails(t, Reports[fakeReport]))
	for _, dir := range []string{"testdata/badtext", "testdata/badjson", t.TempDir()} {
		assert.True(t, fails(t, func(tb testing.TB) { reports[fakeReport](tb, dir) }), dir)
	}
}
