package cache

import (
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGCPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, blocks int64
		want         int
	}{
		{0, 0, 100},
		{10 * mib, 0, 100},                  // small heap: GOGC=100 would allow less than the floor
		{400 * mib, 0, 100},                 // no blocks: plain GOGC=100
		{256*mib + 32*mib, 256 * mib, 10},   // a full cache over a small heap: the least headroom, 32 MiB
		{256*mib + 128*mib, 256 * mib, 30},  // 128 MiB of other heap earns 128 MiB of headroom
		{1024*mib + 256*mib, 256 * mib, 80}, // a large catalog keeps most of its headroom
		{100 * mib, 200 * mib, 30},          // blocks counted but no longer live: the floor
		{1034 * mib, 1024 * mib, 5},         // a large cache over a tiny heap: never below 5%
	} {
		if got := gcPercent(c.live, c.blocks); got != c.want {
			t.Errorf("gcPercent(%d MiB live, %d MiB blocks) = %d, want %d", c.live/mib, c.blocks/mib, got, c.want)
		}
	}
}

// TestIdleReturnGivesBackOnlyWhatIsWorthIt: once collections pause, the
// pacer returns the heap's garbage and freed memory when there is at
// least idleReturnMin of it, and the return leaves none for the next.
func TestIdleReturnGivesBackOnlyWhatIsWorthIt(t *testing.T) {
	debug.FreeOSMemory()
	var mu sync.Mutex
	calls := 0
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return calls
	}
	p := newGCPacer(func() int64 { return 0 }, always, time.Hour, func() {
		mu.Lock()
		calls++
		mu.Unlock()
		debug.FreeOSMemory()
	}, returnable)
	p.returnIdle()
	assert.Zero(t, count(), "nothing to return right after a return (%d bytes)", returnable())

	blocks := make([][]byte, 32)
	for i := range blocks {
		blocks[i] = make([]byte, 1<<20)
		blocks[i][0] = byte(i)
	}
	runtime.KeepAlive(blocks)
	blocks = nil
	runtime.GC() // the blocks, evicted, are freed memory the runtime keeps
	require.GreaterOrEqual(t, returnable(), int64(idleReturnMin))
	p.returnIdle()
	assert.Equal(t, 1, count(), "32 MiB of evicted blocks are returned")
	assert.Less(t, returnable(), int64(idleReturnMin), "the return gave them back")
	p.returnIdle()
	assert.Equal(t, 1, count(), "and the next pause has nothing to return")
}

// TestIdleReturnWaitsForCollectionsToPause: each collection puts the
// return off; it comes once they stop.
func TestIdleReturnWaitsForCollectionsToPause(t *testing.T) {
	debug.FreeOSMemory()
	returned := make(chan time.Time, 1)
	const pause = 200 * time.Millisecond
	p := newGCPacer(func() int64 { return 0 }, always, pause, func() {
		select {
		case returned <- time.Now():
		default:
		}
	}, enough)
	p.idle.Stop()
	var last time.Time
	for range 5 { // a burst of reads: 32 MiB evicted, a collection every 50 ms
		garbage := make([]byte, 32<<20)
		garbage[0] = 1
		runtime.KeepAlive(garbage)
		runtime.GC()
		last = time.Now()
		p.collected()
		time.Sleep(pause / 4)
	}
	select {
	case at := <-returned:
		assert.GreaterOrEqual(t, at.Sub(last), pause, "returned during the burst")
	case <-time.After(30 * time.Second):
		t.Fatal("no return after the burst")
	}
}

// enough is always enough to return: the tests of when a return comes
// do not depend on what the runtime's scavenger has returned meanwhile
// (TestIdleReturnGivesBackOnlyWhatIsWorthIt tests how much).
func enough() int64 { return idleReturnMin }

// always is a reader that has been quiet for good.
func always() time.Duration { return time.Hour }

// TestIdleReturnWaitsForReadersToPause: a slow reader, which allocates too
// little to collect, is not interrupted; the return comes once it stops.
// On a loaded machine a step of the reader can itself take longer than the
// pause: what must hold is that the return comes a pause after the last
// read before it.
func TestIdleReturnWaitsForReadersToPause(t *testing.T) {
	debug.FreeOSMemory()
	var (
		mu    sync.Mutex
		reads []time.Time
	)
	read := func() {
		mu.Lock()
		defer mu.Unlock()
		reads = append(reads, time.Now())
	}
	read()
	quiet := func() time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return time.Since(reads[len(reads)-1])
	}
	returned := make(chan time.Time, 1)
	const pause = 200 * time.Millisecond
	p := newGCPacer(func() int64 { return 0 }, quiet, pause, func() {
		select {
		case returned <- time.Now():
		default:
		}
	}, enough)
	for end := time.Now().Add(5 * pause); time.Now().Before(end); time.Sleep(pause / 4) {
		garbage := make([]byte, 64<<20) // evicted blocks: more to return than the least, all along
		garbage[0] = 1
		runtime.KeepAlive(garbage)
		runtime.GC()
		read() // a read every 50 ms; the pacer sees no collection
	}
	select {
	case at := <-returned:
		mu.Lock()
		last := reads[0]
		for _, r := range reads {
			if r.Before(at) {
				last = r
			}
		}
		mu.Unlock()
		assert.GreaterOrEqual(t, at.Sub(last), pause, "returned while the reader was at work")
	case <-time.After(30 * time.Second):
		t.Fatal("no return after the reads")
	}
	p.idle.Stop()
}
