package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBuiltBinary builds rsfs as a user would (go build, with its VCS
// stamp where there is a git checkout) and runs it: `rsfs --version` and
// `rsfs version`, a usage error, an error a background mount's child meets
// before it has a log, and bash loading the completion script.
func TestBuiltBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "rsfs")
	before := gitHead()
	build := exec.Command("go", "build", "-buildvcs=auto", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	after := gitHead()

	t.Run("version", func(t *testing.T) {
		flagOut, err := exec.Command(bin, "--version").Output()
		require.NoError(t, err)
		cmdOut, err := exec.Command(bin, "version").Output()
		require.NoError(t, err)
		assert.Equal(t, string(flagOut), string(cmdOut))
		lines := strings.Split(strings.TrimSuffix(string(cmdOut), "\n"), "\n")
		require.Len(t, lines, 3, "%s", cmdOut)
		assert.Regexp(t, `^rsfs (v\d+\.\d+\.\d+\S*|\(devel\))$`, lines[0])
		assert.Regexp(t, `^go1\.\d+\S* \w+/\w+$`, lines[2])
		if before == "" {
			assert.Equal(t, "revision unknown (built without VCS information)", lines[1])
			return
		}
		assert.Regexp(t, `^revision [0-9a-f]{40} \(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ(, modified)?\)$`, lines[1])
		rev := strings.Fields(lines[1])[1]
		assert.Contains(t, []string{before, after}, rev, "the revision is the checkout's HEAD")
		if pseudo := regexp.MustCompile(`-\d{14}-([0-9a-f]{12})`).FindStringSubmatch(lines[0]); pseudo != nil {
			assert.Equal(t, rev[:12], pseudo[1], "the pseudo-version names the revision")
		}
	})

	t.Run("usage error", func(t *testing.T) {
		stderr, code := runBinary(t, bin, "version", "extra")
		assert.Equal(t, exitUsage, code)
		assert.Equal(t, "rsfs: unknown command \"extra\" for \"rsfs version\"; usage: rsfs version [flags]\n", stderr)
	})

	t.Run("background error printed once", func(t *testing.T) {
		// The child fails before its output moves to the log (which it
		// cannot open); the parent prints what it reported.
		dir := t.TempDir()
		stderr, code := runBinary(t, bin, "mount", "--cache-dir", "none", "--log-file", "/proc/nonexistent/rsfs.log", "http://127.0.0.1:1/", dir)
		assert.Equal(t, exitFailure, code)
		assert.Equal(t, 1, strings.Count(stderr, "rsfs: "), "%q", stderr)
		assert.Contains(t, stderr, "/proc/nonexistent")
	})

	t.Run("bash completion", func(t *testing.T) {
		if _, err := exec.LookPath("bash"); err != nil {
			t.Skip("no bash")
		}
		out, err := exec.Command("bash", "-c", `source <("$0" completion bash) && complete -p rsfs`, bin).CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Contains(t, string(out), "__start_rsfs rsfs")
	})
}

// runBinary runs bin with args and returns its stderr and exit status.
func runBinary(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil {
		require.True(t, errors.As(err, &exit), "%v", err)
		return stderr.String(), exit.ExitCode()
	}
	return stderr.String(), 0
}

// gitHead is the checkout's HEAD, or "" where there is none.
func gitHead() string {
	if _, err := os.Stat("../../.git"); err != nil {
		return ""
	}
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
