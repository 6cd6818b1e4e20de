package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPipelinedSmallFilesFromNginx (issue 42): `grep -r` over a mount of
// stock nginx on 127.0.0.1 reads every small file's bytes, one GET each,
// most of them pipelined (nginx's own $pipe says so), also where nginx
// ends each connection after 100 answers (keepalive_requests) with more
// requests written on it: those are asked again on another connection,
// and every file is still answered exactly once. The files warmed ahead of
// grep reach the kernel's page cache, with the Source's bytes.
func TestPipelinedSmallFilesFromNginx(t *testing.T) {
	needFUSE(t)
	bin := findNginx(t)
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	addr := freeAddr(t)
	url := "http://" + addr + "/"
	list := smallFiles(1500, 50)(url)
	files := map[string][]byte{}
	for _, f := range list {
		files[f.path] = f.body
	}
	root := filepath.Join(dir, "www")
	writeStaticSource(t, root, url, list)
	conf := nginxPreamble(dir, `$pipe $connection $request_method $uri $status`) + fmt.Sprintf(`	server {
		listen %s;
		root %s;
		keepalive_requests 100;
	}
}
`, addr, root)
	runNginx(t, bin, dir, conf, addr)

	metricsAddr := freeAddr(t)
	m := mount(t, url, "--metrics-addr", metricsAddr)
	out, err := exec.Command("grep", "-r", "-c", "", m.dir).CombinedOutput()
	require.NoError(t, err, "grep -r: %s", out)
	// Files warmed ahead of grep were handed to the kernel's page cache;
	// every file's bytes, read again from there, are the Source's.
	got, _ := scrape(t, metricsAddr)
	t.Logf("%v READs, %v files stored in the page cache", got[`rsfs_fuse_operation_duration_seconds_count{op="read"}`], got["rsfs_kernel_page_stores_total"])
	assert.Positive(t, got["rsfs_kernel_page_stores_total"], "warmed files handed to the kernel's page cache")
	for rel, body := range files {
		got, err := os.ReadFile(m.path(rel))
		require.NoError(t, err, rel)
		require.Equal(t, body, got, rel)
	}

	log, err := os.ReadFile(filepath.Join(dir, "access.log"))
	require.NoError(t, err)
	answered := map[string]int{}
	pipelined, conns := 0, map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(log)), "\n") {
		f := strings.Fields(line)
		if len(f) != 5 || f[2] != "GET" {
			continue
		}
		rel := strings.TrimPrefix(f[3], "/")
		if _, ok := files[rel]; !ok {
			continue
		}
		answered[rel]++
		assert.Equal(t, "200", f[4], line)
		if f[0] == "p" {
			pipelined++
		}
		conns[f[1]] = true
	}
	for rel := range files {
		assert.Equal(t, 1, answered[rel], "%s: one GET answered", rel)
	}
	t.Logf("%d of %d files' GETs pipelined, on %d connections", pipelined, len(files), len(conns))
	assert.Greater(t, pipelined*2, len(files), "most files' GETs were pipelined")
	assert.GreaterOrEqual(t, len(conns), len(files)/100, "nginx ended each connection after 100")
}
