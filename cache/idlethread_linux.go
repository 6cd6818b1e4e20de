package cache

import (
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// lockIdleThread runs the calling goroutine on an OS thread of its own
// that the kernel schedules only when a CPU would otherwise idle
// (SCHED_IDLE; nice 19 where that is refused). The thread is never handed
// back: it ends with the goroutine. The disk cache's writer runs so, so that
// its writes never slow readers or the tools they serve; never use it for
// work that holds, for long, a lock that readers wait on: under load such
// a thread may wait long for a CPU (a snapshot save, which encodes the
// catalog under its read lock, stays at normal priority for that reason).
func lockIdleThread() {
	runtime.LockOSThread()
	attr := unix.SchedAttr{Policy: unix.SCHED_IDLE}
	if unix.SchedSetAttr(0, &attr, 0) != nil {
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 19)
	}
}
