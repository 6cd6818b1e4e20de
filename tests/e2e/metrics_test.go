package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

// freeAddr returns a 127.0.0.1 address no one listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// scrape reads /metrics into a map of "name{labels}" to value.
func scrape(t *testing.T, addr string) (map[string]float64, string) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		require.NoError(t, err, line)
		out[line[:i]] = v
	}
	return out, string(body)
}

func TestMetricsOfAFollowingMount(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 10})
	addr := freeAddr(t)
	m := mount(t, src.URL(), append(pollFlags, "--metrics-addr", addr)...)
	files := walkFiles(t, m.dir)
	var size int64
	for _, p := range files {
		got, err := os.ReadFile(p)
		require.NoError(t, err)
		size += int64(len(got))
	}
	r := src.Resources()[1]
	require.NoError(t, src.Update(r.URI, []byte("changed for metrics\n")))
	eventually(t, "the update", func() bool {
		got, err := os.ReadFile(files[r.URI])
		return err == nil && string(got) == "changed for metrics\n"
	})
	origin := strings.TrimSuffix(src.URL(), "/")
	set := src.URL() + "capabilitylist.xml"
	var got map[string]float64
	var text string
	eventually(t, "the change applied in the metrics", func() bool {
		got, text = scrape(t, addr)
		return got["rsfs_changes_applied_total"] == 1
	})
	assert.Equal(t, 10.0, got["rsfs_resources"])
	assert.Equal(t, 0.0, got[`rsfs_change_lag_seconds{set="`+set+`"}`])
	assert.Equal(t, 0.0, got[`rsfs_polls_total{result="error"}`])
	assert.GreaterOrEqual(t, got[`rsfs_polls_total{result="ok"}`], 1.0)
	assert.Contains(t, got, "rsfs_last_poll_duration_seconds")
	assert.GreaterOrEqual(t, got[`rsfs_http_response_bytes_total{origin="`+origin+`"}`], float64(size))
	requests := 0.0
	for k, v := range got {
		if strings.HasPrefix(k, "rsfs_http_requests_total{") && strings.Contains(k, `origin="`+origin+`"`) {
			requests += v
		}
	}
	c := src.Counters()
	assert.GreaterOrEqual(t, requests, float64(c.Docs()+c.WholeGets+c.RangeGets+c.Heads))
	assert.Positive(t, got[`rsfs_http_requests_total{kind="get",origin="`+origin+`",status="200"}`])
	// Each file read at least once: through rsfs, or from the kernel's
	// page cache, where a walk's warmed files were handed.
	reads, stores := got[`rsfs_fuse_operation_duration_seconds_count{op="read"}`], got["rsfs_kernel_page_stores_total"]
	assert.GreaterOrEqual(t, reads+stores, 10.0, "each file read at least once: %v READs, %v stored", reads, stores)
	assert.GreaterOrEqual(t, reads, 1.0, "the first file of the walk")
	assert.LessOrEqual(t, got[`rsfs_fuse_operation_duration_seconds_count{op="open"}`], 1.0, "the kernel opens files without asking, once told ENOSYS")
	assert.Zero(t, got[`rsfs_fuse_operation_errors_total{op="open"}`], "ENOSYS is no error")
	assert.GreaterOrEqual(t, got[`rsfs_cache_hits_total{tier="memory"}`]+got[`rsfs_cache_misses_total{tier="memory"}`], reads)
	assert.Contains(t, got, `rsfs_cache_evictions_total{tier="disk"}`)
	assert.Equal(t, 0.0, got["rsfs_verification_failures_total"])
	assert.Equal(t, 0.0, got["rsfs_read_errors_total"])
	assert.Equal(t, 0.0, got["rsfs_held"])
	var excerpt []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "rsfs_") && !strings.Contains(line, "_bucket{") {
			excerpt = append(excerpt, line)
		}
	}
	t.Logf("scrape of http://%s/metrics (rsfs_ lines, no buckets):\n%s", addr, strings.Join(excerpt, "\n"))
}

func TestMetricsAddressInUseIsAClearError(t *testing.T) {
	needFUSE(t)
	src := startSource(t, sourcetest.Config{Resources: 2})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	dir := t.TempDir()
	_, stderr, err := run(t, time.Minute, rsfsBin, "mount", src.URL(), dir, "--cache-dir", "none",
		"--log-file", dir+".log", "--metrics-addr", ln.Addr().String())
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 1, exit.ExitCode())
	assert.Contains(t, stderr, "rsfs: --metrics-addr: listen tcp "+ln.Addr().String()+": bind: address already in use")
	assert.False(t, isMountPoint(dir))
}

// TestResourcesBySet: with three resource sets of 3, 3 and 4 resources
// (sourcetest splits 10 as lo=i*n/k), the per-set gauge and rsfs status
// count each set's own, and a deletion in the third set is counted there.
func TestResourcesBySet(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 10, ResourceSets: 3})
	addr := freeAddr(t)
	m := mount(t, src.URL(), append(pollFlags, "--metrics-addr", addr)...)
	metric := func(k int) string {
		return fmt.Sprintf(`rsfs_set_resources{set="%sset%d/capabilitylist.xml"}`, src.URL(), k)
	}
	got, text := scrape(t, addr)
	require.Equal(t, 3.0, got[metric(1)], text)
	assert.Equal(t, 3.0, got[metric(2)])
	assert.Equal(t, 4.0, got[metric(3)])
	assert.Equal(t, 10.0, got["rsfs_resources"])

	require.NoError(t, src.Delete(src.Resources()[9].URI))
	eventually(t, "the deletion counted in the third set", func() bool {
		got, _ = scrape(t, addr)
		return got[metric(3)] == 3
	})
	assert.Equal(t, 3.0, got[metric(1)])
	assert.Equal(t, 9.0, got["rsfs_resources"])

	out, stderr, err := run(t, 30*time.Second, rsfsBin, "status", "--json", m.dir)
	require.NoError(t, err, stderr)
	var st map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	counts := map[string]float64{}
	for _, s := range st["sets"].([]any) {
		set := s.(map[string]any)
		counts[set["set"].(string)] = set["resources"].(float64)
	}
	assert.Equal(t, map[string]float64{
		src.URL() + "set1/capabilitylist.xml": 3,
		src.URL() + "set2/capabilitylist.xml": 3,
		src.URL() + "set3/capabilitylist.xml": 3,
	}, counts)
}
