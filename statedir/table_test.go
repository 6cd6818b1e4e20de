package statedir

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// cache list's table: most recently used first, the holder of a mounted
// one, a dash for what is not known, and the total.
func TestWriteTable(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	dirs := []Info{ // as List returns them: least recently used first
		{Name: "00000000000000aa", Size: 2048, LastUsed: now.Add(-72 * time.Hour)},
		{Name: "00000000000000bb", URL: "https://s.example/", Size: 3 << 30, LastUsed: now.Add(-90 * time.Second), Mounted: true, PID: 42, MountPoint: "/mnt/s"},
	}
	var b strings.Builder
	WriteTable(&b, "/var/cache/rsfs", dirs, now)
	assert.Equal(t, `STATE DIR         SIZE     LAST USED   MOUNTED             SOURCE
00000000000000bb  3.0 GiB  1 min ago   on /mnt/s (pid 42)  https://s.example/
00000000000000aa  2.0 KiB  3 days ago  no                  -
2 state directories, 3.0 GiB, in /var/cache/rsfs
`, b.String())
}
