// Package wait is for tests only: a wait on a condition, bounded so that
// only a hang reaches the bound. No code but tests imports it.
package wait

import (
	"testing"
	"time"
)

// Bound is how long For waits at most: only a broken build or a hang
// reaches it, so it is generous (a loaded machine is slow, not stuck).
const Bound = 30 * time.Second

// For polls cond every 10 ms until it holds, and fails the test, naming
// what it waited for, if it does not within Bound.
func For(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
