package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"rsfs/tests/specsource"
)

// TestMeasureFollow logs, per spec Source layout at a 1 s poll, what
// following costs: document requests and bytes per poll and rsfs's CPU per
// poll, idle and with a change every 2 s, and the time from a change to
// its visibility. It asserts nothing about time; run it with
// RSFS_MEASURE=1 (it takes about 3 minutes).
func TestMeasureFollow(t *testing.T) {
	if os.Getenv("RSFS_MEASURE") == "" {
		t.Skip("set RSFS_MEASURE=1 to measure")
	}
	for _, layout := range []specsource.Layout{specsource.Index, specsource.Today, specsource.NoFrom, specsource.Undated, specsource.Future, specsource.CapRotate, specsource.ChangeDump} {
		t.Run(layout.String(), func(t *testing.T) { measureLayout(t, layout) })
	}
}

func measureLayout(t *testing.T, layout specsource.Layout) {
	src, err := specsource.Start(specsource.Config{Layout: layout, Files: 200, Rotate: 4})
	require.NoError(t, err)
	t.Cleanup(src.Close)
	m := mount(t, src.URL(), "--poll-interval", "1s")
	pid := m.pid(t)
	time.Sleep(2 * time.Second) // past the first poll

	const window = 20 * time.Second
	n0, b0 := src.DocRequests()
	c0 := cpuTicks(t, pid)
	time.Sleep(window)
	n1, b1 := src.DocRequests()
	c1 := cpuTicks(t, pid)
	polls := float64(window / time.Second)
	t.Logf("%s idle: %.1f doc requests/poll, %.0f bytes/poll, %.2f ms CPU/poll", layout,
		float64(n1-n0)/polls, float64(b1-b0)/polls, float64(c1-c0)*10/polls)

	var lat []time.Duration
	start := time.Now()
	for i := 0; i < 10; i++ {
		body := []byte(fmt.Sprintf("version %d of f%03d\n", i, i))
		p := fmt.Sprintf("/data/f%03d.txt", i)
		require.NoError(t, src.Update(p, body))
		at := time.Now()
		waitFor(t, hangBound, "the update", func() bool {
			got, err := os.ReadFile(filepath.Join(m.dir, p))
			return err == nil && bytes.Equal(got, body)
		})
		lat = append(lat, time.Since(at))
		time.Sleep(time.Until(at.Add(2 * time.Second)))
	}
	busy := time.Since(start)
	n2, b2 := src.DocRequests()
	c2 := cpuTicks(t, pid)
	bp := busy.Seconds()
	var ls []string
	for _, l := range lat {
		ls = append(ls, l.Round(10*time.Millisecond).String())
	}
	t.Logf("%s changing: %.1f doc requests/poll, %.0f bytes/poll, %.2f ms CPU/poll (reads included); visible after %s",
		layout, float64(n2-n1)/bp, float64(b2-b1)/bp, float64(c2-c1)*10/bp, strings.Join(ls, " "))
}

// cpuTicks returns a process's user+system CPU in clock ticks (10 ms).
func cpuTicks(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+2:]))
	return int64(atoi(t, f[11]) + atoi(t, f[12]))
}
