package catalog

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/resourcesync"
)

// TestCompareVersion pins the three answers of the one rule of the same
// version: what needs the same version (SameVersion) takes an unknown for
// another version; only what differs is VersionOther.
func TestCompareVersion(t *testing.T) {
	day := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	md5 := func(v string) []resourcesync.Hash { return []resourcesync.Hash{{Alg: "md5", Value: v}} }
	none := resourcesync.NoLength
	for _, tc := range []struct {
		name    string
		r       Resource
		hashes  []resourcesync.Hash
		lastmod time.Time
		length  int64
		want    Version
	}{
		{"common hash agrees", Resource{Hashes: md5("a"), Length: 1}, md5("a"), time.Time{}, 2, VersionSame},
		{"common hash disagrees", Resource{Hashes: md5("a"), Lastmod: day, Length: 1}, md5("b"), day, 1, VersionOther},
		{"lastmods and lengths agree", Resource{Lastmod: day, Length: 1}, nil, day, 1, VersionSame},
		{"lastmods agree, a length unknown", Resource{Lastmod: day, Length: none}, nil, day, 1, VersionSame},
		{"lastmods agree, lengths disagree", Resource{Lastmod: day, Length: 1}, nil, day, 2, VersionOther},
		{"lastmods disagree", Resource{Lastmod: day, Length: 1}, nil, day.Add(time.Second), 1, VersionOther},
		{"one lastmod only", Resource{Length: 1}, nil, day, 1, VersionOther},
		{"no lastmod, no hash, same length", Resource{Length: 1}, nil, time.Time{}, 1, VersionUnknown},
		{"no lastmod, no hash, a length unknown", Resource{Length: none}, nil, time.Time{}, 1, VersionUnknown},
		{"no lastmod, no hash, lengths disagree", Resource{Length: 1}, nil, time.Time{}, 2, VersionOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, CompareVersion(&tc.r, tc.hashes, tc.lastmod, tc.length))
			assert.Equal(t, tc.want == VersionSame, SameVersion(&tc.r, tc.hashes, tc.lastmod, tc.length))
		})
	}
}

// A length learned for a resource that publishes none stays while a
// record of it with no length is, by the one rule (CompareVersion), not
// another version; a record that is another version drops it.
func TestALearnedLengthStaysWhileTheVersionDoes(t *testing.T) {
	day := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	sha := func(v string) []resourcesync.Hash { return []resourcesync.Hash{{Alg: "sha-256", Value: v}} }
	for _, tc := range []struct {
		name         string
		held, again  Resource
		keepsLearned bool
	}{
		{"same lastmod", Resource{Lastmod: day}, Resource{Lastmod: day}, true},
		{"no lastmod, no hash: nothing tells them apart", Resource{}, Resource{}, true},
		{"a common hash agrees, the lastmod moved", Resource{Lastmod: day, Hashes: sha("aa")}, Resource{Lastmod: day.Add(time.Hour), Hashes: sha("aa")}, true},
		{"another lastmod", Resource{Lastmod: day}, Resource{Lastmod: day.Add(time.Hour)}, false},
		{"a common hash disagrees", Resource{Lastmod: day, Hashes: sha("aa")}, Resource{Lastmod: day, Hashes: sha("bb")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New(Options{Origin: "http://x"})
			held, again := tc.held, tc.again
			held.URI, again.URI = "http://x/f", "http://x/f"
			held.Length, again.Length = resourcesync.NoLength, resourcesync.NoLength
			require.NoError(t, c.Add(&held))
			require.NoError(t, c.Seal())
			id, _ := c.ByURI(held.URI)
			v, ok := c.Version(id)
			require.True(t, ok)
			_, ok = c.SetLength(id, v.Attr.Gen, 7)
			require.True(t, ok, "the length learned")
			c.Upsert(&again)
			r, ok := c.Resource(id)
			require.True(t, ok)
			want := int64(resourcesync.NoLength)
			if tc.keepsLearned {
				want = 7
			}
			assert.Equal(t, want, r.Length)
		})
	}
}
