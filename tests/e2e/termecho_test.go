package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoadWarningIsSaidAboveTheLoadingLine mounts with a terminal (script(1))
// a Source whose one large Resource List departs from the standard: the
// warning is said on a line of its own, the loading line cleared before it
// (and drawn again after), never glued to the end of a loading frame.
func TestLoadWarningIsSaidAboveTheLoadingLine(t *testing.T) {
	needFUSE(t)
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("skipping: needs script(1) (util-linux) for a terminal")
	}
	srv := slowListSourceAt(t, 20000, "2026-01-01T00:00:00") // no time zone
	url := srv.URL + "/"
	dir := mountDir(t)
	logFile := filepath.Join(t.TempDir(), "rsfs.log")
	cmd := fmt.Sprintf("%s mount %s %s --cache-dir none --log-file %s", rsfsBin, url, dir, logFile)
	out, stderr, err := run(t, 2*time.Minute, "script", "-qfec", cmd, "/dev/null")
	require.NoError(t, err, "%s%s", out, stderr)
	m := &mounted{url: url, dir: dir, logFile: logFile}
	t.Cleanup(func() { m.unmount(t) })

	const warning = "rsfs: warning: tolerated: datetime without time zone: 2026-01-01T00:00:00"
	require.Equal(t, 1, strings.Count(out, warning), "output: %q", out)
	before, _, _ := strings.Cut(out, warning)
	require.Contains(t, before, "\rloading: ", "the loading line was drawn before the warning: %q", out)
	assert.True(t, strings.HasSuffix(before, "\r\x1b[K"), "the loading line is cleared before the warning, not continued: %q", before[max(0, len(before)-120):])
	assert.Contains(t, out, "20,000 resources\x1b[K\r\n", "the last loading line stays")
	assert.Contains(t, out, "mounted 20,000 resources from "+url)
}
