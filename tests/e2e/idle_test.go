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
	m := mount(t, src.URL(), "--cache-dir", "none", "--poll-interval", "1h")
	pid := m.pid(t)
	time.Sleep(2 * time.Second) // the load's last work, and the first poll
	before := procCPU(t, pid)
	time.Sleep(3 * time.Second)
	used := procCPU(t, pid) - before
	t.Logf("CPU at rest over 3 s: %s", used)
	assert.LessOrEqual(t, used, 20*time.Millisecond, "CPU used by a mount of 1,000,000 resources over 3 s at rest")
}
