package cache

import "sync/atomic"

// beside does work on items in a goroutine of its own, in the order they
// were added, so that a read does not wait on it: the hash of a pass
// (hashPipe) and the checks of a chained version (chainCheck). Queued
// items bound the memory held: add waits when the queue is full.
type beside[T any] struct {
	queue   chan T
	done    chan struct{}
	aborted atomic.Bool
}

// besideDepth is how many items wait at most.
const besideDepth = 32

// startBeside starts the goroutine that calls work on each item added.
func startBeside[T any](work func(T)) *beside[T] {
	w := &beside[T]{queue: make(chan T, besideDepth), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for x := range w.queue {
			if !w.aborted.Load() {
				work(x)
			}
		}
	}()
	return w
}

// add queues x.
func (w *beside[T]) add(x T) { w.queue <- x }

// finish waits until every queued item is done; nothing may be added after.
func (w *beside[T]) finish() {
	close(w.queue)
	<-w.done
}

// abort ends the work without doing what is still queued; nothing may be
// added after.
func (w *beside[T]) abort() {
	w.aborted.Store(true)
	close(w.queue)
}
