// Package idle runs background work only on CPU time nothing else wants.
package idle

// LockThread runs the calling goroutine on an OS thread of its own that
// the kernel schedules only when a CPU would otherwise idle (SCHED_IDLE on
// Linux; nice 19 where that is refused; nothing elsewhere). The thread is
// never handed back: it ends with the goroutine. Use it for work that must
// not slow readers or the tools they serve, such as disk-cache writes; never
// for work that holds, for long, a lock that readers wait on: under load
// such a thread may wait long for a CPU (a snapshot save, which encodes the
// catalog under its read lock, stays at normal priority for that reason).
func LockThread() { lockThread() }
