//go:build !linux

package cache

// lockIdleThread does nothing where SCHED_IDLE is unknown.
func lockIdleThread() {}
