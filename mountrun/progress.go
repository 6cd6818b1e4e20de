package mountrun

import (
	"os"

	"rsfs/fetch"
	"rsfs/source"
	"rsfs/termui"
)

// progress is a mount's loading as the terminal shows it (termui.Loading)
// and as systemd's status says it.
type progress struct {
	show *termui.Loading
	echo *termui.Echo
}

// newProgress shows loading on f; nil shows nothing. Until done, the
// warnings echo says are written above its line.
func newProgress(f *os.File, echo *termui.Echo) *progress {
	if f == nil {
		return &progress{show: termui.NewLoading(nil), echo: echo}
	}
	p := &progress{show: termui.NewLoading(f), echo: echo}
	echo.Over(p.show.Line())
	return p
}

func (p *progress) update(pr source.Progress) { p.show.Update(pr) }

func (p *progress) retry(r fetch.Retry) { p.show.Retry(r) }

func (p *progress) done() {
	p.show.Done()
	p.echo.Over(nil)
}
