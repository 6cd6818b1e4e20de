package cache

import (
	"io"
	"log/slog"
	"os"
	"syscall"
	"testing"
	"time"
)

// BenchmarkDiskScan measures how long New takes over a disk cache of 100,000
// block files, and how long the background scan takes to index them.
func BenchmarkDiskScan(b *testing.B) {
	const files = 100_000
	dir := b.TempDir()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	d, err := openDiskStore(dir, 1<<40, testBlock, lookupIn(nil), quiet) // writes nothing: the files are made by hand
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, 64)
	for i := range files {
		k := blockKey{"bench", int64(i)}
		if err := os.WriteFile(d.path(d.key(k)), append(blockFileHeader(k, testBlock, data), data...), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	d.close()
	var newTook, scanTook time.Duration
	for b.Loop() {
		start := time.Now()
		c, err := NewWithDisk(Config{DiskDir: dir, BlockSize: testBlock, Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		newTook += time.Since(start)
		<-c.disk.scanDone
		scanTook += time.Since(start)
		if got := c.Stats().DiskBlocks; got != files {
			b.Fatalf("indexed %d files", got)
		}
		c.Close()
	}
	b.ReportMetric(float64(newTook.Microseconds())/float64(b.N)/1e3, "new-ms")
	b.ReportMetric(float64(scanTook.Microseconds())/float64(b.N)/1e3, "scan-ms")
}

// BenchmarkDiskWriteSmall measures the disk writer on blocks of a small
// file (3 KiB): wall time per block, and the process's CPU time (user+sys,
// from getrusage) per block, which a loaded machine disturbs less. "pack"
// appends them to packs (a short block of a 1 MiB block size), "file"
// writes a block file each (a 3 KiB block size, so the block is whole), as
// every block was written before packs. RSFS_BENCH_DIR sets where the files
// go (e.g. /dev/shm, to leave out the file system's cost of a create).
func BenchmarkDiskWriteSmall(b *testing.B) {
	for _, mode := range []struct {
		name      string
		blockSize int
	}{{"pack", 1 << 20}, {"file", 3 << 10}} {
		b.Run(mode.name, func(b *testing.B) { benchDiskWrite(b, mode.blockSize) })
	}
}

func benchDiskWrite(b *testing.B, blockSize int) {
	dir := os.Getenv("RSFS_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	} else {
		var err error
		if dir, err = os.MkdirTemp(dir, "bench"); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
	}
	data := make([]byte, 3<<10)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	d, err := openDiskStore(dir, 1<<40, blockSize, func(blockKey) ([]byte, bool) { return data, true }, quiet)
	if err != nil {
		b.Fatal(err)
	}
	defer d.close()
	<-d.scanDone
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	i := 0
	for b.Loop() {
		k := blockKey{"bench-small-file-version-id", int64(i)}
		i++
		if err := d.write(&diskWrite{key: k, dk: d.key(k)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/float64(b.N)/1e3, "cpu-µs/op")
}

// cpuTime is the process's user and system time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
