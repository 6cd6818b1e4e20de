package mountutil

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestUnescapeMountinfo(t *testing.T) {
	assert.Equal(t, "/mnt/my data", unescapeMountinfo(`/mnt/my\040data`))
	assert.Equal(t, `/mnt/a\b`, unescapeMountinfo(`/mnt/a\134b`))
	assert.Equal(t, "/mnt/plain", unescapeMountinfo("/mnt/plain"))
	assert.Equal(t, `/mnt/x\0`, unescapeMountinfo(`/mnt/x\0`))
}

// The mount table's lines, optional fields and escapes included, are read
// as the kernel writes them.
func TestParseMountinfo(t *testing.T) {
	got := parseMountinfo(`22 1 0:21 / /proc rw,nosuid - proc proc rw
45 27 0:42 / /mnt/my\040data ro,nosuid,nodev,relatime shared:7 master:1 - fuse.rsfs https://data.example.org/a\040b ro,user_id=0
garbage
`)
	assert.Equal(t, []Mount{
		{Dir: "/proc", Type: "proc", Source: "proc"},
		{Dir: "/mnt/my data", Type: "fuse.rsfs", Source: "https://data.example.org/a b"},
	}, got)
}
