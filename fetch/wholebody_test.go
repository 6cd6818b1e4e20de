package fetch

import (
	"bytes"
	"io"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWholeClass(t *testing.T) {
	for n, k := range map[int]int{0: 0, 1: 0, 4096: 0, 4097: 1, 8192: 1, 1 << 20: 8, pipeBodyMax: 9, 2 << 20: 9} {
		assert.Equal(t, k, wholeClass(n), "%d bytes", n)
		assert.GreaterOrEqual(t, 1<<(wholeMinShift+k), n, "%d bytes", n)
	}
	assert.Less(t, wholeClass(pipeBodyMax), wholeClasses)
}

// A body reads its own bytes, and none once closed, even after its buffer
// went to the next answer: a caller that reads after Close never sees
// another file's bytes.
func TestWholeBodyClosedReadsNothing(t *testing.T) {
	fill := func(c byte, n int) *wholeBody {
		buf := getWhole(n)
		for i := range *buf {
			(*buf)[i] = c
		}
		return &wholeBody{buf: buf}
	}
	a := fill('a', 5000)
	got, err := io.ReadAll(a)
	require.NoError(t, err)
	assert.Equal(t, bytes.Repeat([]byte("a"), 5000), got)

	a2 := fill('a', 5000)
	head := make([]byte, 10)
	_, err = io.ReadFull(a2, head)
	require.NoError(t, err)
	require.NoError(t, a2.Close())
	require.NoError(t, a2.Close(), "a second Close is harmless")
	b := fill('b', 6000) // likely a2's buffer
	n, err := a2.Read(head)
	assert.Equal(t, 0, n)
	assert.ErrorIs(t, err, errBodyClosed)
	got, err = io.ReadAll(b)
	require.NoError(t, err)
	assert.Equal(t, bytes.Repeat([]byte("b"), 6000), got)
}

// Read and Close at once (run with -race): a read copies out of the buffer
// only while it is the body's.
func TestWholeBodyReadCloseRace(t *testing.T) {
	for range 200 {
		wb := &wholeBody{buf: getWhole(64 << 10)}
		var wg sync.WaitGroup
		wg.Go(func() {
			p := make([]byte, 512)
			for {
				if _, err := wb.Read(p); err != nil {
					return
				}
			}
		})
		wg.Go(func() { _ = wb.Close() })
		wg.Wait()
		other := getWhole(64 << 10) // reuses the buffer while nobody reads it
		putWhole(other)
	}
}
