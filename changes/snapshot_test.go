package changes

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
	"rsfs/fetch"
	"rsfs/source"
)

// savedState was written by Follower.Snapshot when positions were still
// source.Position (before package changes): a snapshot saved then restores,
// and is saved again byte for byte.
const savedState = `{"version":1,"origin":"http://s.example","entry":"http://s.example/.well-known/resourcesync",` +
	`"sets":[{"URL":"http://s.example/caps.xml?a=1\u0026b=\u003c2\u003e","Docs":{"changelist":["http://s.example/cl.xml"],"resourcelist":["http://s.example/rl.xml"]},` +
	`"Hubs":[{"capability":"changelist","topic":"t","hub":"h"}],"Links":null,"ListedAt":"2024-01-01T00:00:00Z"},` +
	`{"URL":"","Docs":{"resourcelist":["http://s.example/rl2.xml"]},"Hubs":null,"Links":null,"ListedAt":"0001-01-01T00:00:00Z"}],` +
	`"positions":{"http://s.example/caps.xml?a=1\u0026b=\u003c2\u003e":{"time":"2024-01-02T03:04:05.000000006Z",` +
	`"seen":["created http://s.example/\u003ca\u003e\u0026b","updated http://s.example/x"],` +
	`"ahead":{"http://s.example/c\u0026d":{"at":"9999-01-01T00:00:00Z","key":"created http://s.example/c\u0026d"}}},` +
	`"http://s.example/rl2.xml":{"time":"0001-01-01T00:00:00Z"}},"mirrors":["http://m.example"]}`

func TestSnapshotOfAnEarlierStateIsTheSameBytes(t *testing.T) {
	st, err := source.DecodeState([]byte(savedState))
	require.NoError(t, err)
	positions, err := DecodePositions(st.Positions)
	require.NoError(t, err)
	require.Len(t, positions, 2)
	p := positions["http://s.example/caps.xml?a=1&b=<2>"]
	assert.Equal(t, time.Date(2024, 1, 2, 3, 4, 5, 6, time.UTC), p.Time)
	assert.Len(t, p.Seen, 2)
	assert.Equal(t, Mark{At: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), Key: "created http://s.example/c&d"}, p.Ahead["http://s.example/c&d"])

	s := source.Restore(st, source.Options{Client: fetch.New(fetch.Options{})})
	f := New(s, catalog.New(catalog.Options{Origin: s.Origin}), FollowOptions{}, positions)
	var saved []byte
	require.NoError(t, f.Snapshot(func(b []byte) error { saved = b; return nil }))
	assert.Equal(t, savedState, string(saved))
}

// A state saved without positions (or with null) restores none: the
// catalog counts as fresh.
func TestDecodePositionsOfNone(t *testing.T) {
	for _, raw := range []string{"", "null"} {
		positions, err := DecodePositions([]byte(raw))
		require.NoError(t, err, raw)
		assert.Nil(t, positions, raw)
	}
	_, err := DecodePositions([]byte(`{"x":{"seen":3}}`))
	assert.ErrorContains(t, err, "decode source state: position:")
}
