package mountutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A hold is written as every state file is (atomicfile): the temporary file
// synced, renamed over the hold file, then the directory synced, so that
// the rename survives a crash. Seen from outside, with strace.
func TestWriteHoldSyncsTheDirectory(t *testing.T) {
	if path := os.Getenv("RSFS_TEST_WRITE_HOLD"); path != "" {
		require.NoError(t, WriteHold(path, time.Now().Add(time.Hour)))
		return
	}
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("no strace")
	}
	dir := t.TempDir()
	hold := filepath.Join(dir, "hold-0123456789abcdef")
	trace := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command(strace, "-f", "-qq", "-o", trace, "-e", "trace=openat,fsync,rename,renameat,renameat2",
		os.Args[0], "-test.run=^TestWriteHoldSyncsTheDirectory$", "-test.count=1")
	cmd.Env = append(os.Environ(), "RSFS_TEST_WRITE_HOLD="+hold)
	out, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(string(out), "PTRACE") {
		t.Skipf("strace cannot trace here: %s", out)
	}
	require.NoError(t, err, "%s", out)
	data, err := os.ReadFile(trace)
	require.NoError(t, err)
	lines := joinUnfinished(strings.Split(string(data), "\n"))
	renamed, dirFD := -1, ""
	openDir := regexp.MustCompile(`openat\(AT_FDCWD, "` + regexp.QuoteMeta(dir) + `", [^)]*\) = (\d+)`)
	for i, l := range lines {
		if strings.Contains(l, "rename") && strings.Contains(l, `"`+hold+`"`) && strings.HasSuffix(l, "= 0") {
			renamed = i
		}
		if m := openDir.FindStringSubmatch(l); m != nil && renamed >= 0 {
			dirFD = m[1]
		}
		if dirFD != "" && strings.Contains(l, "fsync("+dirFD+")") && strings.HasSuffix(l, "= 0") {
			return // the directory was synced after the rename
		}
	}
	t.Fatalf("no fsync of %s after the rename onto %s:\n%s", dir, hold, data)
}

// joinUnfinished joins each of strace -f's calls that another thread's
// interrupted ("PID call(args <unfinished ...>", later "PID <... call
// resumed>rest") into one line, at the place where it returned: on a loaded
// machine the threads' calls interleave, and a split call matches no
// pattern.
func joinUnfinished(lines []string) []string {
	open := map[string]string{} // pid → the call's first part
	var out []string
	for _, l := range lines {
		pid, rest, _ := strings.Cut(l, " ")
		if head, ok := strings.CutSuffix(rest, " <unfinished ...>"); ok {
			open[pid] = head
			continue
		}
		if strings.HasPrefix(rest, "<... ") {
			if _, tail, ok := strings.Cut(rest, " resumed>"); ok {
				out = append(out, pid+" "+open[pid]+tail)
				delete(open, pid)
				continue
			}
		}
		out = append(out, l)
	}
	return out
}

func TestJoinUnfinished(t *testing.T) {
	got := joinUnfinished([]string{
		`7 openat(AT_FDCWD, "/d", O_RDONLY|O_CLOEXEC <unfinished ...>`,
		`8 rename("/d/a", "/d/b") = 0`,
		`7 <... openat resumed>) = 5`,
		`7 fsync(5) = 0`,
	})
	require.Equal(t, []string{
		`8 rename("/d/a", "/d/b") = 0`,
		`7 openat(AT_FDCWD, "/d", O_RDONLY|O_CLOEXEC) = 5`,
		`7 fsync(5) = 0`,
	}, got)
}
