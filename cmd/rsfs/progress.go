package main

import (
	"os"

	"rsfs/fetch"
	"rsfs/source"
	"rsfs/termui"
)

// progress is a mount's loading as the terminal shows it (termui.Loading)
// and as systemd's status says it.
type progress struct{ show *termui.Loading }

// newProgress shows loading on f; nil shows nothing. Until done, the
// warnings echoed are written above its line.
func newProgress(f *os.File) *progress {
	if f == nil {
		return &progress{termui.NewLoading(nil)}
	}
	p := &progress{termui.NewLoading(f)}
	loadEcho.Over(p.show.Line())
	return p
}

func (p *progress) update(pr source.Progress) {
	notifySystemd.loading(pr)
	p.show.Update(pr)
}

func (p *progress) retry(r fetch.Retry) { p.show.Retry(r) }

func (p *progress) done() {
	p.show.Done()
	loadEcho.Over(nil)
}

// loadEcho is the mount's echo of its loading's warnings.
var loadEcho = &termui.Echo{}
