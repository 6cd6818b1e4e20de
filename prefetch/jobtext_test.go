package prefetch

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestJobWriteText(t *testing.T) {
	var b strings.Builder
	j := Job{Files: 3, FailedCount: 2, DoneBytes: 2048, FetchedFiles: 1, FetchedBytes: 1024, OnDiskFiles: 0, Took: 1.234,
		Failed: []Failure{{Path: "a/b", Error: "EIO"}}}
	j.WriteText(&b, "dir", "--cache-max-size", nil)
	assert.Equal(t, "dir: 1 of 3 files on disk (2.0 KiB): 1 fetched (1.0 KiB), 0 were on disk already, 2 failed, in 1.23s\n"+
		"  not fetched: a/b: EIO\n"+
		"  and 1 more not fetched (the mount's log names each)\n", b.String())

	b.Reset()
	big := Job{Error: "too big", Needs: 1 << 20, Files: 2, Bytes: 3 << 20, DiskMax: 2 << 20}
	big.WriteText(&b, "dir", "--cache-max-size", nil)
	assert.Equal(t, "dir: 2 files, 3.0 MiB, do not fit --cache-max-size 2.0 MiB: it needs 1.0 MiB more; nothing fetched\n", b.String())

	b.Reset()
	failed := Job{Error: "no disk"}
	failed.WriteText(&b, "dir", "--cache-max-size", func(s string) string { return s + " (why)" })
	assert.Equal(t, "dir: no disk (why); nothing fetched\n", b.String())

	b.Reset()
	(&Released{Files: 2, Bytes: 4096}).WriteText(&b, "dir")
	assert.Equal(t, "dir: released 2 files (4.0 KiB); they age out of the disk cache as any others\n", b.String())
}
