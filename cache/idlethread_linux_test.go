package cache

import (
	"testing"

	"golang.org/x/sys/unix"
)

// A locked thread runs only on CPU time nobody else wants: a
// first read's disk-cache writes must not take CPU from the read (issue 14).
func TestDiskWriterThreadIsSchedIdle(t *testing.T) {
	got := make(chan uint32, 1)
	go func() {
		lockIdleThread() // locks this goroutine to its thread, which then exits with it
		attr, err := unix.SchedGetAttr(0, 0)
		if err != nil {
			t.Errorf("sched_getattr: %v", err)
			got <- 0
			return
		}
		got <- attr.Policy
	}()
	if p := <-got; p != unix.SCHED_IDLE {
		t.Errorf("thread policy = %d, want SCHED_IDLE (%d)", p, unix.SCHED_IDLE)
	}
}
