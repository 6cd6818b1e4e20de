package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quickStart is the README's quick start: the command that starts the
// test Source, and the commands typed in the other terminal.
func quickStart(t *testing.T) (source string, steps []string) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	defer f.Close()
	in, blocks, prevLine := false, [][]string{}, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = strings.HasPrefix(line, "## Quick start")
		case in && strings.HasPrefix(line, "    "):
			if len(blocks) == 0 || !strings.HasPrefix(prevLine, "    ") {
				blocks = append(blocks, nil)
			}
			blocks[len(blocks)-1] = append(blocks[len(blocks)-1], strings.TrimSpace(line))
		}
		prevLine = line
	}
	require.Len(t, blocks, 2, "the quick start's two blocks: the Source, and the commands")
	require.Len(t, blocks[0], 1)
	return blocks[0][0], blocks[1]
}

// TestQuickStart runs the README's quick start as written, with rsfs on
// PATH as the package installs it (and as `PATH=$PWD:$PATH` after `go
// build`): every command succeeds, and nothing on the way warns a
// newcomer.
func TestQuickStart(t *testing.T) {
	needFUSE(t)
	source, steps := quickStart(t)
	t.Logf("the Source: %s; the steps: %q", source, steps)
	require.True(t, strings.HasPrefix(source, "go run ./tests/sourcetest/cmd/rsfs-testsource"), source)

	// The test Source, on a free port: its flags as the README gives them.
	bin := filepath.Join(t.TempDir(), "rsfs-testsource")
	build := exec.Command("go", "build", "-o", bin, "./tests/sourcetest/cmd/rsfs-testsource")
	build.Dir = filepath.Join("..", "..")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	args := append(strings.Fields(strings.TrimPrefix(source, "go run ./tests/sourcetest/cmd/rsfs-testsource")), "-addr", "127.0.0.1:0")
	srv := exec.Command(bin, args...)
	stdout, err := srv.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, srv.Start())
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	url := strings.TrimSpace(line)
	require.Regexp(t, `^http://127\.0\.0\.1:\d+/$`, url)

	// The other terminal: rsfs on PATH, a home of its own, /tmp/rs as
	// the README's own directory in a directory of the test's.
	home, binDir := t.TempDir(), t.TempDir()
	copyFile(t, rsfsBin, filepath.Join(binDir, "rsfs"), 0o755)
	mnt := filepath.Join(t.TempDir(), "rs")
	env := []string{"PATH=" + binDir + ":/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=" + home}
	t.Cleanup(func() {
		if isMountPoint(mnt) {
			_, _, _ = run(t, 30*time.Second, "umount", mnt)
		}
	})
	var all strings.Builder
	for _, step := range steps {
		cmdline := strings.ReplaceAll(strings.ReplaceAll(step, "http://127.0.0.1:8080/", url), "/tmp/rs", mnt)
		pid := 0
		if strings.HasPrefix(step, "umount ") {
			pid = (&mounted{url: url, dir: mnt}).pid(t)
		}
		cmd := exec.Command("sh", "-c", cmdline)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		t.Logf("$ %s\n%s", step, out)
		require.NoError(t, err, "%s: %s", step, out)
		all.WriteString(string(out))
		if pid != 0 { // it saves its snapshot under HOME as it exits
			waitFor(t, 30*time.Second, "rsfs to exit", func() bool { return exited(pid) })
		}
		if strings.HasPrefix(step, "find ") {
			assert.Equal(t, "5000", strings.TrimSpace(string(out)), "the files")
		}
	}
	assert.NotRegexp(t, regexp.MustCompile(`(?i)warn|error|fail`), all.String(), "nothing alarming")
	assert.False(t, isMountPoint(mnt), "unmounted by the last step")
}
