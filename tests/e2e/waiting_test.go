package e2e

import (
	"net"
	"path/filepath"
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
