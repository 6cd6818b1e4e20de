package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"rsfs/fs"
)

// TestWarmBarLine: on a terminal, warm's line gives files, bytes, rate
// and time left, drawn again in place; off, nothing.
func TestWarmBarLine(t *testing.T) {
	var out bytes.Buffer
	b := &warmBar{w: &out, on: true, start: time.Now()}
	b.show([]*warmTarget{{job: fs.WarmJob{Files: 10, DoneFiles: 4, Bytes: 3 << 20}}, {job: fs.WarmJob{Files: 5, DoneFiles: 1, Bytes: 1 << 20}}})
	assert.Equal(t, "\r\x1b[Kwarm [##########--------------------] 5/15 files, 0 B/4.0 MiB, 0 B/s, ETA ?", out.String())
	out.Reset()
	b.show([]*warmTarget{{job: fs.WarmJob{Files: 10, DoneFiles: 10, Bytes: 3 << 20, DoneBytes: 3 << 20}}})
	b.end()
	assert.Regexp(t, `^\r\x1b\[Kwarm \[#{30}\] 10/10 files, 3\.0 MiB/3\.0 MiB, [0-9.]+ [KMG]?i?B/s, ETA 0s\n$`, out.String())
	out.Reset()
	b.show([]*warmTarget{{job: fs.WarmJob{}}})
	assert.Equal(t, "\r\x1b[Kwarm [##############################] 0/0 files, 0 B/0 B, 0 B/s, ETA 0s", out.String())

	var none bytes.Buffer
	off := &warmBar{w: &none, start: time.Now()}
	off.show([]*warmTarget{{job: fs.WarmJob{Files: 1}}})
	off.end()
	assert.Empty(t, none.String())
}
