package atomfeed

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/atomsource"
)

func reps(body string) atomsource.Rep {
	return atomsource.Rep{Type: "text/plain", Ext: "txt", Body: []byte(body)}
}

// Status counts the changes after the load, not the load's records; the
// feed's position is its harvest mark, held where it was by a failed poll.
func TestStatus(t *testing.T) {
	fx := start(t, atomsource.Config{PerDocument: 2})
	for _, n := range []string{"a", "b", "c"} {
		require.NoError(t, fx.src.Create(n, n, reps(n)))
	}
	ctx := testCtx(t)
	require.NoError(t, fx.fl.Load(ctx))
	st := fx.fl.Status()
	assert.Equal(t, int64(1), st.Polls)
	assert.Zero(t, st.Applied, "the load's records are not changes")
	require.Len(t, st.Sets, 1)
	loaded := st.Sets[0].Position
	assert.Equal(t, fx.src.URL(), st.Sets[0].Set)
	assert.False(t, loaded.IsZero())
	assert.Equal(t, loaded, st.Sets[0].Newest)

	require.NoError(t, fx.src.Create("d", "d", reps("d")))
	require.NoError(t, fx.fl.Poll(ctx))
	st = fx.fl.Status()
	assert.Equal(t, int64(1), st.Applied)
	assert.Equal(t, loaded.Add(time.Minute), st.Sets[0].Position, "the producer's clock moves a minute a mutation")
	assert.Empty(t, st.LastPollErr)

	require.NoError(t, fx.src.Create("e", "e", reps("e")))
	fx.src.Fail("/feed", http.StatusServiceUnavailable)
	require.Error(t, fx.fl.Poll(ctx))
	st = fx.fl.Status()
	assert.Equal(t, int64(1), st.PollFailures)
	assert.Contains(t, st.LastPollErr, "503")
	assert.Equal(t, loaded.Add(time.Minute), st.Sets[0].Position, "a failed poll moves no mark")
	assert.Equal(t, int64(3), st.Polls)
}
