package idle

import (
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

func lockThread() {
	runtime.LockOSThread()
	attr := unix.SchedAttr{Policy: unix.SCHED_IDLE}
	if unix.SchedSetAttr(0, &attr, 0) != nil {
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 19)
	}
}
