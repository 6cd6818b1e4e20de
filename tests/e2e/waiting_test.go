package e2e

import (
	"net"
	"os"
	"path/filepath"
	"rsfs/tests/sourcetest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A server that accepts connections and never answers: the mount says, at
// each retry, what it is waiting for, instead of minutes of silence, and
// fails with the cause once the retries are spent.
func TestAMountSaysWhatItIsWaitingFor(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() }) // held open, never answered
		}
	}()
	url := "http://" + ln.Addr().String() + "/"
	dir := mountDir(t)
	start := time.Now()
	_, stderr, err := run(t, time.Minute, rsfsBin, "mount", "--cache-dir", "none", "--timeout", "1s", "--retries", "2",
		"--log-file", filepath.Join(t.TempDir(), "rsfs.log"), url, dir)
	require.Error(t, err, "nothing to mount")
	assert.Less(t, time.Since(start), 30*time.Second)
	assert.Contains(t, stderr, "waiting for "+url+".well-known/resourcesync: attempt 1 of 3 failed")
	assert.Contains(t, stderr, "attempt 2 of 3 failed")
	assert.False(t, isMountPoint(dir))
}

// A URL typed with user information: it is never sent (no Authorization
// header reaches the Source) and never written: not in the log, not in
// status.
func TestCredentialsInTheMountURLAreNeitherSentNorLogged(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 5})
	url := strings.Replace(src.URL(), "http://", "http://user:secret@", 1)
	m := mount(t, url)
	out, _, err := run(t, 30*time.Second, rsfsBin, "status", "--json", m.dir)
	require.NoError(t, err)
	assert.NotContains(t, out, "secret")
	assert.Contains(t, out, src.URL())
	log, err := os.ReadFile(m.logFile)
	require.NoError(t, err)
	assert.NotContains(t, string(log), "secret")
	assert.Contains(t, string(log), "user information in the URL is never sent")
}
