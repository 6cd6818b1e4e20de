package termui

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestWarmLine: on a terminal, warm's line gives files, bytes, rate and
// time left, drawn again in place and ended once; off, nothing.
func TestWarmLine(t *testing.T) {
	var out bytes.Buffer
	b := NewWarm(&out, true)
	b.Show(WarmTotals{Files: 15, DoneFiles: 5, Bytes: 4 << 20})
	assert.Equal(t, "\rwarm [##########--------------------] 5/15 files, 0 B/4.0 MiB, 0 B/s, ETA ?\x1b[K", out.String())
	out.Reset()
	b.Show(WarmTotals{Files: 10, DoneFiles: 10, Bytes: 3 << 20, DoneBytes: 3 << 20, Fetched: 3 << 20})
	b.End()
	assert.Regexp(t, `^(\rwarm \[#{30}\] 10/10 files, 3\.0 MiB/3\.0 MiB, [0-9.]+ [KMG]?i?B/s, ETA 0s\x1b\[K){2}\n$`, out.String())

	assert.Equal(t, "warm [##############################] 0/0 files, 0 B/0 B, 0 B/s, ETA 0s", WarmText(WarmTotals{}, time.Second))
	assert.Equal(t, "warm [###############---------------] 2/4 files, 1.0 MiB/3.0 MiB, 512.0 KiB/s, ETA 4s",
		WarmText(WarmTotals{Files: 4, DoneFiles: 2, Bytes: 3 << 20, DoneBytes: 1 << 20, Fetched: 1 << 20}, 2*time.Second))

	var none bytes.Buffer
	off := NewWarm(&none, false)
	off.Show(WarmTotals{Files: 1})
	off.End()
	assert.Empty(t, none.String())
}

func TestBar(t *testing.T) {
	assert.Equal(t, "[#####-----]", Bar(10, 1, 2))
	assert.Equal(t, "[----------]", Bar(10, 0, 2))
	assert.Equal(t, "[##########]", Bar(10, 0, 0), "nothing to do: done")
	assert.Equal(t, "[##########]", Bar(10, 3, 2), "never past the end")
}
