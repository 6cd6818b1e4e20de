package main

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The man pages in docs/man are generated from the commands and from
// docs/usage.md (manmd_test.go), by
//
//	go generate ./cmd/rsfs
//
// which runs TestManPages with -update-man. Without it, TestManPages fails
// when a page is not what the commands and usage.md give now.
//
//go:generate go test -run ^TestManPages$ -update-man .

var updateMan = flag.Bool("update-man", false, "rewrite docs/man from the commands (go generate ./cmd/rsfs)")

// manDir is where the man pages are kept, from this package.
const manDir = "../../docs/man"

// callerDefaults are the flag defaults that depend on who runs rsfs,
// as the pages say them.
var callerDefaults = map[string]string{"uid": "your uid", "gid": "your gid"}

// manPages renders the page of every command (and of every completion
// shell), dated date, by file name.
func manPages(t *testing.T, date time.Time) map[string][]byte {
	t.Helper()
	root := rootCmd()
	root.DisableAutoGenTag = true // no "Auto generated ... on DATE" section
	root.InitDefaultCompletionCmd()
	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				if d, ok := callerDefaults[f.Name]; ok {
					f.DefValue = d
				}
			})
		}
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(root)
	dir := t.TempDir()
	require.NoError(t, doc.GenManTree(root, &doc.GenManHeader{Section: "1", Source: "rsfs", Manual: "rsfs manual", Date: &date}, dir))
	pages := readPages(t, dir)
	addManual(t, pages)
	return pages
}

// readPages reads the *.1 files in dir, by name.
func readPages(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.1"))
	require.NoError(t, err)
	pages := map[string][]byte{}
	for _, n := range names {
		data, err := os.ReadFile(n)
		require.NoError(t, err)
		pages[filepath.Base(n)] = data
	}
	return pages
}

// thDate is the date field of a page's .TH line.
var thDate = regexp.MustCompile(`(?m)^(\.TH "[^"]*" "[^"]*" )"[^"]*"`)

// undated is a page without its date, for comparing: a page is current
// when only its date differs.
func undated(page []byte) []byte {
	return thDate.ReplaceAll(page, []byte(`$1"DATE"`))
}

// manDate is the date a regenerated page carries: SOURCE_DATE_EPOCH if
// set, else now.
func manDate(t *testing.T) time.Time {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err, "SOURCE_DATE_EPOCH")
		return time.Unix(n, 0).UTC()
	}
	return time.Now().UTC()
}

// TestManPages checks that docs/man holds the page of every command, as
// the commands give it now (dates aside), and nothing else; with
// -update-man it rewrites the pages that changed (dated now) and removes
// those of commands that are gone, keeping the others as they are.
func TestManPages(t *testing.T) {
	want := manPages(t, manDate(t))
	have := readPages(t, manDir)
	if *updateMan {
		require.NoError(t, os.MkdirAll(manDir, 0o755))
		for name, page := range want {
			if old, ok := have[name]; ok && bytes.Equal(undated(old), undated(page)) {
				continue
			}
			require.NoError(t, os.WriteFile(filepath.Join(manDir, name), page, 0o644))
			t.Logf("wrote %s", name)
		}
		for name := range have {
			if _, ok := want[name]; !ok {
				require.NoError(t, os.Remove(filepath.Join(manDir, name)))
				t.Logf("removed %s", name)
			}
		}
		return
	}
	const hint = "docs/man is not current: run go generate ./cmd/rsfs"
	assert.Equal(t, sortedKeys(want), sortedKeys(have), hint)
	for name, page := range want {
		if old, ok := have[name]; ok {
			assert.Equal(t, string(undated(page)), string(undated(old)), "%s: %s", name, hint)
		}
	}
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestManPagesDeterministic checks that two renderings, at different
// dates and for a caller of another uid, differ in their dates alone.
func TestManPagesDeterministic(t *testing.T) {
	a := manPages(t, time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	b := manPages(t, time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC))
	require.NotEmpty(t, a)
	for name := range a {
		assert.NotEqual(t, string(a[name]), string(b[name]), name)
		assert.Equal(t, string(undated(a[name])), string(undated(b[name])), name)
	}
	assert.Contains(t, string(a["rsfs-mount.1"]), `your uid`)
	assert.Contains(t, string(a["rsfs-mount.1"]), `"Jan 2020"`)
}

// TestManPagesFormatAt80Columns formats every page as man(1) does on an
// 80-column terminal: troff warns of nothing (a word longer than the line
// makes "cannot adjust line").
func TestManPagesFormatAt80Columns(t *testing.T) {
	if _, err := exec.LookPath("man"); err != nil {
		t.Skip("skipping: no man(1)")
	}
	if _, err := exec.LookPath("groff"); err != nil {
		t.Skip("skipping: no groff")
	}
	pages, err := filepath.Glob(filepath.Join(manDir, "*.1"))
	require.NoError(t, err)
	require.NotEmpty(t, pages)
	for _, page := range pages {
		cmd := exec.Command("man", "-l", page)
		cmd.Env = append(os.Environ(), "MANWIDTH=80", "MANPAGER=cat", "PAGER=cat")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Run(), "man -l %s: %s", page, stderr.String())
		assert.Empty(t, stderr.String(), "man -l %s at 80 columns", filepath.Base(page))
	}
}
