package atompmh_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"rsfs/atompmh"
	"rsfs/tests/atomsource"
)

// BenchmarkHarvest100k is the scale case of issue 12: 100,000 records, two
// representations each, in 100 archive documents of 1,000 entries and a
// subscription document, harvested from scratch over HTTP on 127.0.0.1.
// It reports the documents fetched, the entries read per second, the CPU
// time of consumer and producer together, the peak heap above the baseline
// (live objects and garbage not yet collected, at the default GOGC,
// sampled every millisecond) and the heap the harvested state retains.
func BenchmarkHarvest100k(b *testing.B) {
	const records, perDoc = 100_000, 1000
	src := atomsource.Start(atomsource.Config{PerDocument: perDoc})
	defer src.Close()
	for i := range records {
		name := fmt.Sprintf("r%06d", i)
		if err := src.Create(name, "Record "+name, xmlRep(name), rdfRep(name)); err != nil {
			b.Fatal(err)
		}
	}
	// One update rotates the full subscription document: 100 archives.
	if err := src.Update("r000000", "Record r000000 v2", xmlRep("r000000")); err != nil {
		b.Fatal(err)
	}
	h := newHarvester()
	harvestAll := func() (*atompmh.State, *atompmh.Result) {
		st := atompmh.NewState()
		res, err := h.Harvest(context.Background(), src.URL(), st)
		if err != nil {
			b.Fatal(err)
		}
		if !res.Whole || len(st.Pool) != records || len(res.Documents) != 101 {
			b.Fatalf("whole %v, %d records, %d documents", res.Whole, len(st.Pool), len(res.Documents))
		}
		return st, res
	}
	harvestAll() // the producer renders and caches its archives

	var peak atomic.Uint64
	stop := sampleHeap(&peak)
	runtime.GC()
	base := heapBytes()
	peak.Store(base)
	cpu0 := cpuTime()
	b.ResetTimer()
	var st *atompmh.State
	for b.Loop() {
		st = nil // one harvest's peak, not two pools
		st, _ = harvestAll()
	}
	b.StopTimer()
	cpu := cpuTime() - cpu0
	stop()
	runtime.GC()
	retained := heapBytes()
	runtime.KeepAlive(st)
	b.ReportMetric(float64(records+1)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(101, "docs/op")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(peak.Load()-base)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(retained-base)/(1<<20), "pool-heap-MiB")
}

// cpuTime is the process's user and system CPU time: the consumer's and
// the producer's, on a machine shared with others where wall time says
// little.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapBytes is the heap held by live and not yet swept objects.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// sampleHeap records the highest heapBytes seen every millisecond until
// the returned function is called.
func sampleHeap(peak *atomic.Uint64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if h := heapBytes(); h > peak.Load() {
					peak.Store(h)
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}
