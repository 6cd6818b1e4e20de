package sdnotify

import (
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func listen(t *testing.T, name string) *net.UnixConn {
	t.Helper()
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn
}

func receive(t *testing.T, conn *net.UnixConn) string {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	buf := make([]byte, 4096)
	n, err := conn.Read(buf)
	require.NoError(t, err)
	return string(buf[:n])
}

func TestNotifySendsDatagrams(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify")
	conn := listen(t, path)
	t.Setenv(Socket, path)
	require.NoError(t, Status("loading"))
	require.NoError(t, Ready())
	require.NoError(t, Stopping())
	assert.Equal(t, "STATUS=loading", receive(t, conn))
	assert.Equal(t, "READY=1", receive(t, conn))
	assert.Equal(t, "STOPPING=1", receive(t, conn))
}

func TestNotifyAbstractSocket(t *testing.T) {
	name := "@rsfs-sdnotify-test-" + filepath.Base(t.TempDir())
	conn := listen(t, name)
	t.Setenv(Socket, name)
	require.NoError(t, Ready())
	assert.Equal(t, "READY=1", receive(t, conn))
}

func TestNotifyWithoutSocketDoesNothing(t *testing.T) {
	t.Setenv(Socket, "")
	assert.NoError(t, Ready())
	t.Setenv(Socket, filepath.Join(t.TempDir(), "absent"))
	assert.Error(t, Ready(), "a socket named but absent is an error")
}
