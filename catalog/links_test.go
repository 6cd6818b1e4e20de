package catalog

import (
	"math/rand/v2"
	"rsfs/resourcesync"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRelName(t *testing.T) {
	for rel, want := range map[string]string{
		"describedby": "describedby",
		"DescribedBy": "describedby",
		"http://www.openarchives.org/rs/terms/patch":  "patch",
		"http://www.openarchives.org/rs/terms/patch/": "patch",
		"http://purl.org/dc/terms/#isPartOf":          "isPartOf",
		"urn:example:rel":                             "rel",
		"memento":                                     "memento",
		"":                                            "",
		"two words":                                   "",
	} {
		assert.Equal(t, want, RelName(rel), rel)
	}
}

func sampleLinks() []Link {
	mod := time.Date(2013, 1, 2, 18, 0, 0, 500, time.FixedZone("", -5*3600))
	return []Link{
		{Rel: "duplicate", Href: "http://mirror.example.com/res1", Pri: 1, Length: resourcesync.NoLength},
		{Rel: "memento", Href: "http://example.com/20130103070000/res1", Modified: mod, Length: 0, Type: "text/html",
			Hashes: []resourcesync.Hash{{Alg: "md5", Value: "1584abdf8ebdc9802ac0c6a7402c03b6"}, {Alg: "x-odd", Value: "Z"}}},
		{Rel: InternalRelPrefix + "dump", Href: "http://example.com/p.zip", Path: "/res1", Length: 8876},
	}
}

func TestLinksBlobRoundTrip(t *testing.T) {
	assert.Nil(t, appendLinks(nil, nil), "no links, no bytes")
	ls := sampleLinks()
	blob := appendLinks([]byte("x"), ls)[1:]
	got, ok := decodeLinks(append(blob, "trailing arena bytes"...))
	require.True(t, ok)
	require.Len(t, got, len(ls))
	for i := range ls {
		assert.True(t, ls[i].Modified.Equal(got[i].Modified))
		got[i].Modified = ls[i].Modified
	}
	assert.Equal(t, ls, got)
	_, off := got[1].Modified.Zone()
	assert.Equal(t, -5*3600, off, "the zone is kept")
}

// A damaged blob (a corrupt snapshot) is refused, never a panic.
func TestLinksBlobDamaged(t *testing.T) {
	blob := appendLinks(nil, sampleLinks())
	for n := range len(blob) {
		_, ok := decodeLinks(blob[:n])
		assert.False(t, ok, "cut at %d", n)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := slices.Clone(blob)
		for range 1 + rng.IntN(4) {
			b[rng.IntN(len(b))] = byte(rng.Uint32())
		}
		decodeLinks(b) // must not panic
	}
}

// Links are stored in the arena: a resource without any costs no bytes,
// a change of links alone is a change, and links of a snapshot from
// before version 3 (its links section) move into the arena.
func TestLinksStored(t *testing.T) {
	c := New(Options{Origin: "http://example.com"})
	require.NoError(t, c.Add(&Resource{URI: "http://example.com/a", Length: 1}))
	used := c.Stats().ArenaUsed
	require.NoError(t, c.Add(&Resource{URI: "http://example.com/b", Length: 1, Links: sampleLinks()}))
	require.NoError(t, c.Seal())
	assert.Equal(t, 1, c.Stats().WithLinks)
	a, _ := c.ByURI("http://example.com/a")
	r, _ := c.Resource(a)
	assert.Nil(t, r.Links)
	assert.Less(t, used, c.Stats().ArenaUsed)

	b, _ := c.ByURI("http://example.com/b")
	r, _ = c.Resource(b)
	assert.Len(t, r.Links, 3)
	assert.Empty(t, c.Upsert(r), "the same links: no change")
	r.Links = r.Links[:1]
	assert.Len(t, c.Upsert(r), 1, "other links: a change")
	r, _ = c.Resource(b)
	assert.Equal(t, "duplicate", r.Links[0].Rel)
	assert.Len(t, r.Links, 1)
	r.Links = nil
	assert.Len(t, c.Upsert(r), 1)
	assert.Equal(t, 0, c.Stats().WithLinks)

	require.NoError(t, c.moveOldLinks(map[NodeID][]Link{a: sampleLinks()}))
	r, _ = c.Resource(a)
	assert.Len(t, r.Links, 3)
	assert.Equal(t, 1, c.Stats().WithLinks)
	assert.Error(t, c.moveOldLinks(map[NodeID][]Link{a: sampleLinks()}), "a file whose record has links already")
	c.Remove("http://example.com/a")
	assert.Equal(t, 0, c.Stats().WithLinks)
}
