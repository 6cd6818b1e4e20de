package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"rsfs/tests/sourcetest"
)

// BenchmarkHeadFirstByte measures what --verify-whole-below costs: the time
// `head -c1` takes on a file never read before, verified whole first
// ("whole") or streamed ("stream"), for several sizes. Each iteration reads
// another file of the same size (cold in rsfs and in the kernel).
//
//	go test -run '^$' -bench HeadFirstByte -benchtime 8x ./tests/e2e/
func BenchmarkHeadFirstByte(b *testing.B) {
	for _, size := range []int{1 << 20, 4 << 20, 16 << 20, 64 << 20} {
		for _, mode := range []struct{ name, flag string }{{"whole", "1GiB"}, {"stream", "0"}} {
			b.Run(fmt.Sprintf("%dMiB/%s", size>>20, mode.name), func(b *testing.B) {
				benchFirstByte(b, size, mode.flag)
			})
		}
	}
}

func benchFirstByte(b *testing.B, size int, verifyWhole string) {
	const files = 8
	src, err := sourcetest.Start(sourcetest.Config{Resources: files, MinSize: int64(size), MaxSize: int64(size), Hashes: []string{"sha-256"}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(src.Close)
	dir := b.TempDir()
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		b.Fatal(err)
	}
	out, err := exec.Command(rsfsBin, "mount", src.URL(), mnt, "--cache-dir", "none", "--log-file", filepath.Join(dir, "log"),
		"--poll-interval", "0", "--cache-size", "4GiB", "--verify-whole-below", verifyWhole).CombinedOutput()
	if err != nil {
		b.Fatalf("mount: %v %s", err, out)
	}
	b.Cleanup(func() {
		if err := exec.Command("umount", mnt).Run(); err != nil {
			_ = syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	})
	var paths []string
	_ = filepath.WalkDir(mnt, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			paths = append(paths, p)
		}
		return nil
	})
	if len(paths) < files {
		b.Fatalf("%d files on the mount", len(paths))
	}
	if b.N > files {
		b.Fatalf("at most %d iterations (-benchtime %dx)", files, files)
	}
	b.ResetTimer()
	var total time.Duration
	for i := range b.N {
		start := time.Now()
		if out, err := exec.Command("head", "-c1", paths[i]).Output(); err != nil || len(out) != 1 {
			b.Fatalf("head -c1 %s: %v (%d bytes)", paths[i], err, len(out))
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/first-byte")
}
