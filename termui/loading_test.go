package termui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"rsfs/fetch"
	"rsfs/source"
)

// TestLoadingShowsBytesAsTheyArrive: on a terminal, each report shows the
// bytes, the lists and the resources; once the lists' total is known, a
// bar of it; with the rate; without a terminal, nothing.
func TestLoadingShowsBytesAsTheyArrive(t *testing.T) {
	var out bytes.Buffer
	l := &Loading{line: NewLine(&out, true, 100*time.Millisecond)}
	l.Update(source.Progress{Docs: 2, Started: 1, Bytes: 3 << 20, Expected: 8 << 20, Resources: 4422})
	assert.Equal(t, "\rloading: 3.0 MiB; 0/2 lists, 4,422 resources\x1b[K", out.String(), "a list not asked for yet: no total")

	out.Reset()
	l.Update(source.Progress{Docs: 2, Started: 2, Done: 1, Bytes: 4 << 20, Expected: 8 << 20, Resources: 9000})
	assert.Empty(t, out.String(), "at most ten times a second")

	start := time.Now()
	l.rate = Meter{}
	l.rate.Add(start.Add(-2*time.Second), 2<<20)
	l.line.last = time.Time{}
	l.Update(source.Progress{Docs: 2, Started: 2, Done: 1, Bytes: 4 << 20, Expected: 8 << 20, Resources: 9000})
	assert.Regexp(t, `^\rloading: \[##########----------\]  50% 4\.0/8\.0 MiB, (1\.0 MiB|10[12]\d\.\d KiB)/s; 1/2 lists, 9,000 resources\x1b\[K$`, out.String())

	out.Reset()
	l.final = source.Progress{Docs: 2, Started: 2, Done: 2, Bytes: 8 << 20, Expected: 8 << 20, Resources: 18000, Missing: 10}
	l.Done()
	assert.Regexp(t, `^\rloading: \[####################\] 100% 8\.0/8\.0 MiB, [0-9.]+ [KM]iB/s; 2/2 lists, 18,000 resources \(10 without a length\)\x1b\[K\n$`, out.String())

	var none bytes.Buffer
	q := NewLoading(&none)
	q.Update(source.Progress{Docs: 1, Started: 1, Bytes: 100, Expected: 200})
	q.Done()
	assert.Empty(t, none.String(), "nothing without a terminal")
}

// TestRetryIsSaidOnceOnTheTerminal: a retry of the load is said on the
// terminal in the loading's words, over the loading line, and logged;
// the echo of the log's warnings does not say it again, but says the
// other warnings, once each, without the attributes of every line, above
// the loading line while it is drawn.
func TestRetryIsSaidOnceOnTheTerminal(t *testing.T) {
	var term, log bytes.Buffer
	echo := &Echo{}
	old := slog.Default()
	t.Cleanup(func() { slog.SetDefault(old) })
	slog.SetDefault(slog.New(echo.Handler(slog.NewTextHandler(&log, nil))).With("source", "http://s/"))
	echo.Start(&term)
	l := &Loading{line: NewLine(&term, true, 0)}
	echo.Over(l.Line())
	l.Update(source.Progress{Docs: 1, Resources: 1000})
	l.Retry(fetch.Retry{URL: "http://s/rl.xml", Attempt: 2, Attempts: 5, Wait: 1234 * time.Millisecond, Cause: errors.New("503 Service Unavailable")})
	slog.Warn("a deviation", "doc", "http://s/a.xml")
	slog.Warn("a deviation", "doc", "http://s/b.xml")
	l.Update(source.Progress{Docs: 1, Resources: 2000})
	l.Done()
	echo.Over(nil)
	slog.Warn("another deviation")
	echo.Stop()
	assert.Equal(t, "\rloading: 0 B; 0/1 lists, 1,000 resources\x1b[K"+
		"\r\x1b[Kwaiting for http://s/rl.xml: attempt 2 of 5 failed (503 Service Unavailable); retrying in 1.2s\n"+
		"\r\x1b[Krsfs: warning: a deviation (doc=http://s/a.xml)\n"+
		"\rloading: 0 B; 0/1 lists, 2,000 resources\x1b[K"+
		"\rloading: 0 B; 0/1 lists, 2,000 resources\x1b[K\n"+
		"rsfs: warning: another deviation\n"+
		"rsfs: warning: a deviation: 1 more in the log\n", term.String())
	assert.Contains(t, log.String(), `level=WARN msg="the Source does not answer; retrying" source=http://s/ url=http://s/rl.xml attempt=2 of=5 wait=1.234s cause="503 Service Unavailable"`)

	term.Reset()
	slog.Warn("after the echo")
	assert.Empty(t, term.String(), "stopped: nothing more on the terminal")
	assert.Contains(t, log.String(), "after the echo")
}

// TestLineTakesOneWriterAtATime: the loaders' updates, the client's
// retries and the log's echo come from their own goroutines; each frame
// and each line above is written whole (run with -race).
func TestLineTakesOneWriterAtATime(t *testing.T) {
	var term bytes.Buffer
	echo := &Echo{}
	echo.Start(&term)
	l := &Loading{line: NewLine(&term, true, 0)}
	echo.Over(l.Line())
	h := echo.Handler(slog.NewTextHandler(io.Discard, nil))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				switch g {
				case 0, 1:
					l.Update(source.Progress{Docs: 1, Resources: int64(i)})
				case 2:
					l.Retry(fetch.Retry{URL: "http://s/", Attempt: 1, Attempts: 2, Cause: errors.New("x")})
				case 3:
					r := slog.NewRecord(time.Now(), slog.LevelWarn, fmt.Sprintf("w%d", i), 0)
					assert.NoError(t, h.Handle(context.Background(), r))
				}
			}
		}()
	}
	wg.Wait()
	l.Done()
	echo.Stop()
	frame := regexp.MustCompile(`^(loading: 0 B; 0/1 lists, \d+ resources\x1b\[K|\x1b\[K)?$`)
	above := regexp.MustCompile(`^(waiting for http://s/: attempt 1 of 2 failed \(x\); retrying in 0s|rsfs: warning: w\d+)$`)
	for _, line := range strings.Split(strings.TrimSuffix(term.String(), "\n"), "\n") {
		parts := strings.Split(line, "\r")
		for _, p := range parts[:len(parts)-1] {
			assert.Regexp(t, frame, p)
		}
		if last := parts[len(parts)-1]; !frame.MatchString(last) {
			assert.Regexp(t, above, strings.TrimPrefix(last, "\x1b[K"))
		}
	}
}
