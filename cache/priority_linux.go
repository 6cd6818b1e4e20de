package cache

import (
	"runtime"
	"syscall"
)

// lowerPriority runs the calling goroutine on an OS thread of its own at
// the lowest CPU priority (nice 19), so background disk writes yield to
// readers and to the tools they serve. The thread is never handed back.
func lowerPriority() {
	runtime.LockOSThread()
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 19)
}
