package catalog

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/resourcesync"
)

func limitResource(i int) *Resource {
	return &Resource{URI: fmt.Sprintf("http://src.example/d%03d/file-%06d.txt", i%7, i), Length: int64(i), Lastmod: t1,
		Hashes: []resourcesync.Hash{{Alg: "md5", Value: fmt.Sprintf("%032x", i)}}}
}

// fillUntilFull adds resources until one is refused and returns how many
// went in and the refusal.
func fillUntilFull(t *testing.T, c *Catalog, add func(*Resource) error) (int, error) {
	t.Helper()
	for i := 0; i < 1_000_000; i++ {
		if err := add(limitResource(i)); err != nil {
			return i, err
		}
	}
	t.Fatal("the limit was never reached")
	return 0, nil
}

func TestCapacityLimitsAreErrorsNotPanics(t *testing.T) {
	cases := map[string]struct {
		limits Limits
		want   string
		exact  int // resources that fit, when the limit says so exactly
	}{
		"records":   {limits: Limits{Records: 100}, want: "99 resources", exact: 99},
		"uri index": {limits: Limits{IndexBits: minTableBits}, want: "URI index of 2^10 slots", exact: 768},
		"arena":     {limits: Limits{ArenaBytes: 256 << 10}, want: "262144 bytes"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := New(Options{Origin: "http://src.example", Limits: tc.limits})
			n, err := fillUntilFull(t, c, c.Add)
			require.ErrorIs(t, err, ErrFull)
			assert.Contains(t, err.Error(), tc.want)
			if tc.exact > 0 {
				assert.Equal(t, tc.exact, n)
			}
			assert.Equal(t, n, c.Len(), "the refused resource left nothing behind")
			_, found := c.ByURI(limitResource(n).URI)
			assert.False(t, found)

			require.NoError(t, c.Seal(), "what went in is sealed")
			for _, i := range []int{0, n / 2, n - 1} {
				id, ok := c.ByURI(limitResource(i).URI)
				require.True(t, ok)
				a, _ := c.Attr(id)
				assert.Equal(t, int64(i), a.Size)
				assert.Equal(t, fmt.Sprintf("file-%06d.txt", i), c.nameOf(id))
			}

			effects, err := c.TryUpsert(limitResource(n))
			require.ErrorIs(t, err, ErrFull, "after Seal too")
			assert.Nil(t, effects)
			assert.Equal(t, n, c.Len())
			assert.Nil(t, c.Upsert(limitResource(n)), "Upsert leaves it out")
			assert.Equal(t, n, c.Len())

			// A known resource's new version still fits where it needs nothing new.
			r := limitResource(0)
			r.Length = 12345
			r.Hashes = nil
			_, err = c.TryUpsert(r)
			require.NoError(t, err)
			id, _ := c.ByURI(r.URI)
			a, _ := c.Attr(id)
			assert.Equal(t, int64(12345), a.Size)
		})
	}
}

func TestSealReportsAFullArena(t *testing.T) {
	// Names that differ from their URI's last segment (percent-decoded) are
	// stored while sealing: fill the arena with them, then seal.
	c := New(Options{Origin: "http://src.example", Limits: Limits{ArenaBytes: 128 << 10}})
	long := strings.Repeat("%41", 60)
	var n int
	for ; ; n++ {
		err := c.Add(&Resource{URI: fmt.Sprintf("http://src.example/%s-%06d", long, n), Length: 1, Lastmod: t1})
		if err != nil {
			require.ErrorIs(t, err, ErrFull)
			break
		}
	}
	require.Positive(t, n)
	err := c.Seal()
	require.ErrorIs(t, err, ErrFull)
	assert.Contains(t, err.Error(), "131072 bytes")
}

func TestProductLimitsStay(t *testing.T) {
	var l Limits
	assert.Equal(t, uint64(1<<32), l.arenaBytes())
	assert.Equal(t, NodeID(1<<31-1), l.records())
	assert.Equal(t, 32, l.indexBits())
	big := Limits{ArenaBytes: 1 << 40, Records: 1 << 40, IndexBits: 40}
	assert.Equal(t, uint64(1<<32), big.arenaBytes(), "a hook never raises a limit")
	assert.Equal(t, NodeID(1<<31-1), big.records())
	assert.Equal(t, 32, big.indexBits())
}

// fits predicts exactly whether reserve stays within the limit.
func TestArenaFitsPredictsReserve(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 200 {
		a := arena{max: uint64(1+rng.IntN(8)) << arenaChunkBits}
		a.max += uint64(rng.IntN(arenaChunkSize))
		for step := 0; ; step++ {
			n := rng.IntN(4096)
			if rng.IntN(50) == 0 {
				n = arenaChunkSize/2 + rng.IntN(2*arenaChunkSize)
			}
			ok := a.fits(n)
			panicked := func() (p bool) {
				defer func() { p = recover() != nil }()
				a.reserve(n)
				return false
			}()
			require.Equal(t, ok, !panicked, "round %d step %d: fits(%d) at %d of %d", round, step, n, a.next, a.max)
			if panicked {
				break
			}
		}
	}
}
