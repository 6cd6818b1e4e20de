package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"rsfs/tests/sourcetest"
)

// A mount at rest costs no CPU, however large its tree: nothing walks the
// catalog on a timer. (A status loop that counted every resource by set
// five times a second cost 41 ms of CPU a second at 1,000,000 resources,
// without systemd even listening.)
func TestMountAtRestUsesNoCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 1,000,000 resources")
	}
	src := startSource(t, sourcetest.Config{Resources: 1_000_000, PerList: 50_000})
	m := mountWithin(t, 10*time.Minute, src.URL(), "--cache-dir", "none", "--poll-interval", "1h")
	pid := m.pid(t)
	// The load's last work (freeing what parsing the lists left) ends
	// when it ends on a loaded machine: wait for a quiet second first.
	quiet := procCPU(t, pid)
	waitFor(t, hangBound, "a second in which the mount uses no CPU", func() bool {
		time.Sleep(time.Second)
		now := procCPU(t, pid)
		used := now - quiet
		quiet = now
		return used <= 5*time.Millisecond
	})
	before := procCPU(t, pid)
	time.Sleep(3 * time.Second)
	used := procCPU(t, pid) - before
	t.Logf("CPU at rest over 3 s: %s", used)
	assert.LessOrEqual(t, used, 20*time.Millisecond, "CPU used by a mount of 1,000,000 resources over 3 s at rest")
}
