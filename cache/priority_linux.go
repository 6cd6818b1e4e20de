package cache

import (
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// lowerPriority runs the calling goroutine on an OS thread of its own that
// the kernel schedules only when a CPU would otherwise idle (SCHED_IDLE;
// nice 19 where that is refused), so background disk writes take no CPU
// from readers and the tools they serve. The thread is never handed back.
func lowerPriority() {
	runtime.LockOSThread()
	attr := unix.SchedAttr{Policy: unix.SCHED_IDLE}
	if unix.SchedSetAttr(0, &attr, 0) != nil {
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 19)
	}
}
