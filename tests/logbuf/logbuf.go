// Package logbuf is a log sink for tests whose code logs from several
// goroutines: a bytes.Buffer behind a lock.
package logbuf

import (
	"bytes"
	"log/slog"
	"sync"
)

// Buffer collects what is written to it, from any goroutine. The zero
// value is ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Logger returns a text logger writing to b.
func (b *Buffer) Logger() *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }
