package follow

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// AfterPoll runs after every poll that ran, whole or early, failed or not.
func TestAfterPollRunsAfterEachPoll(t *testing.T) {
	rec := &recorder{}
	var after atomic.Int64
	l := New(rec.poll, Options{MinGap: time.Millisecond, AfterPoll: func() {
		assert.Equal(t, int64(rec.count()), after.Add(1), "called after the poll, not before")
	}})
	require.NoError(t, l.Poll(context.Background()))
	rec.err = errors.New("down")
	require.Error(t, l.Poll(context.Background()))
	l.PollSoon(3)
	require.Error(t, l.PollEarly(context.Background()))
	assert.Equal(t, int64(3), after.Load())
	require.NoError(t, l.PollEarly(context.Background()), "no early poll asked for: none runs")
	assert.Equal(t, int64(3), after.Load())
}
