package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFlagMistakesAreUsageErrors runs the usual mistakes of a new user
// through the built binary, as typed: each exits 2 with one line that says
// what would be right, starts nothing, and leaves no state directory
// behind.
func TestFlagMistakesAreUsageErrors(t *testing.T) {
	xdg := t.TempDir()
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"mount", "--poll-interval", "5", "http://127.0.0.1:1/", dir}, `missing unit in duration "5"; use a unit: 5s, 1m, 1h`},
		{[]string{"mount", "--verify-whole-below", "1GiB", "http://127.0.0.1:1/", dir}, "--verify-whole-below 1GiB: want at most a quarter of --cache-size (64MiB)"},
		{[]string{"mount", dir, "http://127.0.0.1:1/"}, "the URL comes first (did you mean 'rsfs mount http://127.0.0.1:1/ " + dir + "'?)"},
		{[]string{"mount", "127.0.0.1:8080", dir}, `"127.0.0.1:8080" is not an http(s) URL (did you mean http://127.0.0.1:8080/?)`},
		{[]string{"mount", "htp://127.0.0.1:8080/", dir}, `"htp://127.0.0.1:8080/" is not an http(s) URL`},
		{[]string{"inspect", "localhost:8080"}, "(did you mean http://localhost:8080/?)"},
		{[]string{dir, "http://127.0.0.1:1/", "-o", "ro"}, "the URL comes first"}, // mount(8)'s form, swapped in fstab
	} {
		cmd := exec.Command(rsfsBin, c.args...)
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+xdg)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := runWithin(t, cmd, time.Minute)
		var exit *exec.ExitError
		require.True(t, errors.As(err, &exit), "%v: %v", c.args, err)
		assert.Equal(t, 2, exit.ExitCode(), "%v: %s", c.args, stderr.String())
		assert.Contains(t, stderr.String(), c.want, "%v", c.args)
		assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), "one line: %q", stderr.String())
	}
	left, _ := filepath.Glob(filepath.Join(xdg, "rsfs", "*"))
	assert.Empty(t, left, "a usage error starts nothing")
	assert.False(t, isMountPoint(dir))
}

// runWithin runs cmd, killing it after timeout.
func runWithin(t *testing.T, cmd *exec.Cmd, timeout time.Duration) error {
	t.Helper()
	require.NoError(t, cmd.Start())
	timer := time.AfterFunc(timeout, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	return cmd.Wait()
}
