package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"rsfs/source"
)

// progress shows loading on a terminal, at most ten times a second.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	last  time.Time
	shown bool
}

func newProgress(f *os.File) *progress {
	st, err := f.Stat()
	return &progress{w: f, tty: err == nil && st.Mode()&os.ModeCharDevice != 0}
}

func (p *progress) update(pr source.Progress) {
	notifySystemd.loading(pr)
	if !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	p.shown = true
	fmt.Fprintf(p.w, "\rloading: %d lists read, %d resources", pr.Lists, pr.Resources)
	if pr.Missing > 0 {
		fmt.Fprintf(p.w, ", %d/%d lengths learned", pr.Learned, pr.Missing)
	}
}

func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprintln(p.w)
	}
}
