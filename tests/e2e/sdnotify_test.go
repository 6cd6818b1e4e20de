package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

// notice is one sd_notify datagram, with what the mount showed when it
// arrived.
type notice struct {
	msg      string
	mounted  bool
	readable bool // the probe file read its published bytes
}

// fakeSystemd plays systemd's part: it receives sd_notify datagrams.
type fakeSystemd struct {
	path string
	mu   sync.Mutex
	got  []notice
}

func startFakeSystemd(t *testing.T, dir, probe string, want []byte) *fakeSystemd {
	t.Helper()
	s := &fakeSystemd{path: filepath.Join(t.TempDir(), "notify")}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: s.path, Net: "unixgram"})
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			nt := notice{msg: string(buf[:n]), mounted: isMountPoint(dir)}
			if nt.mounted {
				got, err := os.ReadFile(filepath.Join(dir, probe))
				nt.readable = err == nil && bytes.Equal(got, want)
			}
			s.mu.Lock()
			s.got = append(s.got, nt)
			s.mu.Unlock()
		}
	}()
	return s
}

func (s *fakeSystemd) notices() []notice {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]notice(nil), s.got...)
}

func (s *fakeSystemd) has(prefix string) bool {
	for _, n := range s.notices() {
		if strings.HasPrefix(n.msg, prefix) {
			return true
		}
	}
	return false
}

func TestForegroundMountSpeaksSdNotify(t *testing.T) {
	needFUSE(t)
	src := startSource(t, sourcetest.Config{Resources: 10})
	probe := src.Resources()[0]
	want, _ := src.Body(probe.URI)
	probePath := strings.TrimPrefix(probe.URI, src.URL())
	base := t.TempDir()
	dir := filepath.Join(base, "mnt")
	require.NoError(t, os.Mkdir(dir, 0o755))
	sd := startFakeSystemd(t, dir, probePath, want)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, rsfsBin, "mount", src.URL(), dir, "--foreground", "--poll-interval", "300ms",
		"--cache-dir", filepath.Join(base, "cache"), "--log-format", "json")
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+sd.path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if isMountPoint(dir) {
			_, _, _ = run(t, 30*time.Second, "umount", dir)
		}
		cancel()
	})
	waitFor(t, 2*time.Minute, "READY=1", func() bool { return sd.has("READY=1") })

	require.NoError(t, src.Update(probe.URI, []byte("changed under systemd\n")))
	eventually(t, "a STATUS line after the change", func() bool {
		return sd.has("STATUS=following: 10 resources, 1 changes applied; last poll ")
	})
	_, errOut, err := run(t, 30*time.Second, "umount", dir)
	require.NoError(t, err, errOut)
	select {
	case err := <-exited:
		require.NoError(t, err, "rsfs exit: %s", stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("rsfs did not exit after umount")
	}
	waitFor(t, hangBound, "STOPPING=1", func() bool { return sd.has("STOPPING=1") })

	got := sd.notices()
	ready := -1
	for i, n := range got {
		if n.msg == "READY=1" {
			ready = i
			break
		}
	}
	require.Positive(t, ready, "STATUS lines come before READY=1: %+v", got)
	assert.Equal(t, "STATUS=loading "+src.URL(), got[0].msg)
	for _, n := range got[:ready] {
		assert.True(t, strings.HasPrefix(n.msg, "STATUS=loading"), n.msg)
		assert.False(t, n.mounted, "%q came before the mount", n.msg)
	}
	assert.True(t, got[ready].readable, "at READY=1 the mount serves the file's bytes")
	assert.Equal(t, "STATUS=serving 10 resources from "+src.URL(), got[ready+1].msg)
	for _, n := range got[ready+2 : len(got)-1] {
		assert.True(t, strings.HasPrefix(n.msg, "STATUS=following: 10 resources, "), n.msg)
	}
	assert.Equal(t, "STOPPING=1", got[len(got)-1].msg)

	// --log-format json: every line of the log is a JSON object.
	sc := bufio.NewScanner(&stderr)
	lines := 0
	for sc.Scan() {
		var rec map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec), sc.Text())
		assert.NotEmpty(t, rec["msg"])
		assert.NotEmpty(t, rec["level"])
		lines++
	}
	assert.Positive(t, lines)
}
