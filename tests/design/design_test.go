// Package design checks that docs/DESIGN.md stays true to the code where a
// machine can tell: the import graph of §2.
package design

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "rsfs/"

// documented reads the import graph from DESIGN's fenced `imports` block:
// one line per package, "pkg ─► dep dep ...".
func documented(t *testing.T, root string) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "docs", "DESIGN.md"))
	require.NoError(t, err)
	graph := map[string][]string{}
	in := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "```imports":
			in = true
		case in && line == "```":
			return graph
		case in && line != "":
			pkg, deps, ok := strings.Cut(line, "─►")
			require.True(t, ok, "DESIGN.md imports line without ─►: %q", line)
			pkg = strings.TrimSpace(pkg)
			_, dup := graph[pkg]
			require.False(t, dup, "DESIGN.md lists %s twice", pkg)
			graph[pkg] = sorted(strings.Fields(deps))
		}
	}
	t.Fatal("DESIGN.md has no ```imports block")
	return nil
}

// actual is every non-test package outside tests/ with its rsfs imports,
// from go list.
func actual(t *testing.T, root string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err, "go list")
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		if strings.HasPrefix(pkg, "tests/") {
			continue
		}
		deps := []string{}
		for _, d := range fields[1:] {
			if strings.HasPrefix(d, module) {
				deps = append(deps, strings.TrimPrefix(d, module))
			}
		}
		graph[pkg] = sorted(deps)
	}
	return graph
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestDesignImportGraphIsGoList(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	doc, real := documented(t, root), actual(t, root)
	for pkg, deps := range real {
		listed, ok := doc[pkg]
		if !assert.True(t, ok, "docs/DESIGN.md §2 does not list package %s (imports: %v)", pkg, deps) {
			continue
		}
		assert.Equal(t, deps, listed, "docs/DESIGN.md §2: the rsfs imports of %s", pkg)
	}
	for pkg := range doc {
		_, ok := real[pkg]
		assert.True(t, ok, "docs/DESIGN.md §2 lists %s, which go list does not know", pkg)
	}
}
