package cache

import (
	"io"
	"log/slog"
	"os"
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
