package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"rsfs/source"
)

// TestProgressShowsBytesAsTheyArrive: on a terminal, each report shows the
// bytes, the lists and the resources; once the lists' total is known, a
// bar of it; with the rate; without a terminal, nothing.
func TestProgressShowsBytesAsTheyArrive(t *testing.T) {
	var out bytes.Buffer
	p := &progress{w: &out, tty: true}
	p.update(source.Progress{Docs: 2, Started: 1, Bytes: 3 << 20, Expected: 8 << 20, Resources: 4422})
	assert.Equal(t, "\rloading: 3.0 MiB; 0/2 lists, 4,422 resources\x1b[K", out.String(), "a list not asked for yet: no total")

	out.Reset()
	p.update(source.Progress{Docs: 2, Started: 2, Done: 1, Bytes: 4 << 20, Expected: 8 << 20, Resources: 9000})
	assert.Empty(t, out.String(), "at most ten times a second")

	start := time.Now()
	p.rate = rateMeter{}
	p.rate.add(start.Add(-2*time.Second), 2<<20)
	p.last = time.Time{}
	p.update(source.Progress{Docs: 2, Started: 2, Done: 1, Bytes: 4 << 20, Expected: 8 << 20, Resources: 9000})
	assert.Regexp(t, `^\rloading: \[##########----------\]  50% 4\.0/8\.0 MiB, (1\.0 MiB|10[12]\d\.\d KiB)/s; 1/2 lists, 9,000 resources\x1b\[K$`, out.String())

	out.Reset()
	p.final = source.Progress{Docs: 2, Started: 2, Done: 2, Bytes: 8 << 20, Expected: 8 << 20, Resources: 18000, Missing: 10}
	p.done()
	assert.Regexp(t, `^\rloading: \[####################\] 100% 8\.0/8\.0 MiB, [0-9.]+ [KM]iB/s; 2/2 lists, 18,000 resources \(10 without a length\)\x1b\[K\n$`, out.String())

	var none bytes.Buffer
	q := &progress{w: &none}
	q.update(source.Progress{Docs: 1, Started: 1, Bytes: 100, Expected: 200})
	q.done()
	assert.Empty(t, none.String(), "nothing without a terminal")
}
