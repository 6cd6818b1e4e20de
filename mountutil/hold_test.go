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
	lines := strings.Split(string(data), "\n")
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
