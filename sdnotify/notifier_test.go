package sdnotify

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Follow sends each new outcome once, and nothing is sent after
// STOPPING=1.
func TestNotifierFollowsAndStops(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify")
	conn := listen(t, path)
	t.Setenv(Socket, path)
	var n Notifier
	n.Ready("serving 3 resources")
	assert.Equal(t, "READY=1", receive(t, conn))
	assert.Equal(t, "STATUS=serving 3 resources", receive(t, conn))

	var mu sync.Mutex
	at, line := time.Unix(1, 0), "first"
	var asked atomic.Int32
	last := func() (time.Time, string) { asked.Add(1); mu.Lock(); defer mu.Unlock(); return at, line }
	stop := n.Follow(context.Background(), last)
	assert.Equal(t, "STATUS=first", receive(t, conn))
	// Asked twice more with the same outcome: a copy of it would come
	// before the next.
	seen := asked.Load()
	require.Eventually(t, func() bool { return asked.Load() >= seen+2 }, 10*time.Second, 10*time.Millisecond)
	mu.Lock()
	at, line = time.Unix(2, 0), "second"
	mu.Unlock()
	assert.Equal(t, "STATUS=second", receive(t, conn), "the same outcome is not sent twice")
	stop()
	n.Stopping()
	assert.Equal(t, "STOPPING=1", receive(t, conn))
	n.Send("STATUS=after")
	n.Stopping()
	assert.NoError(t, Notify("MARK")) // datagrams arrive in order: none came between
	assert.Equal(t, "MARK", receive(t, conn), "nothing after STOPPING=1")
}
