package source

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"rsfs/catalog"
	"rsfs/copies"
	"rsfs/resourcesync"
)

// TestDumpCopyIsAttachedOnlyWhenItIsTheSameVersion pins DESIGN §4 rule 3:
// a dump copy is attached to the resource a Resource List names (one more
// origin in its Links) only when it is the same version: a hash both
// publish with the same algorithm agrees; else the lastmod agrees, and the
// length where both give one. A copy of another version is not an origin
// for it, and is not shown as a resource of its own either (the resource
// is listed).
func TestDumpCopyIsAttachedOnlyWhenItIsTheSameVersion(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2024, 1, d, 0, 0, 0, 0, time.UTC) }
	sha := func(v string) resourcesync.Hash { return resourcesync.Hash{Alg: "sha-256", Value: v} }
	md5 := func(v string) resourcesync.Hash { return resourcesync.Hash{Alg: "md5", Value: v} }
	const (
		shaA = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
		shaB = "486ea46224d1bb4fb680f34f7c9ad96a8f24ec88be73ea8e5a6c65260e9cb8a7"
		md5A = "5d41402abc4b2a76b9719d911017c592"
	)
	none := resourcesync.NoLength
	type side struct {
		hashes  []resourcesync.Hash
		lastmod time.Time
		length  int64
	}
	for _, tc := range []struct {
		name     string
		listed   side // the Resource List's resource
		dump     side // the dump manifest's copy
		attached bool
	}{
		{"same sha-256", side{[]resourcesync.Hash{sha(shaA)}, day(1), 5}, side{[]resourcesync.Hash{sha(shaA)}, day(1), 5}, true},
		{"same sha-256, other lastmod and length: the hash decides", side{[]resourcesync.Hash{sha(shaA)}, day(1), 5}, side{[]resourcesync.Hash{sha(shaA)}, day(2), 6}, true},
		{"different sha-256, same lastmod and length", side{[]resourcesync.Hash{sha(shaA)}, day(1), 5}, side{[]resourcesync.Hash{sha(shaB)}, day(1), 5}, false},
		{"md5 listed, sha-256 in the dump, same lastmod: the lastmod decides", side{[]resourcesync.Hash{md5(md5A)}, day(1), 5}, side{[]resourcesync.Hash{sha(shaA)}, day(1), 5}, true},
		{"sha-256 listed, md5 in the dump, same lastmod: the lastmod decides", side{[]resourcesync.Hash{sha(shaA)}, day(1), 5}, side{[]resourcesync.Hash{md5(md5A)}, day(1), 5}, true},
		{"md5 listed, sha-256 in the dump, other lastmod", side{[]resourcesync.Hash{md5(md5A)}, day(1), 5}, side{[]resourcesync.Hash{sha(shaA)}, day(2), 5}, false},
		{"md5 and sha-256 listed, sha-256 in the dump agrees", side{[]resourcesync.Hash{md5(md5A), sha(shaA)}, day(1), 5}, side{[]resourcesync.Hash{sha(shaA)}, day(2), 5}, true},
		{"no hash, same lastmod and length", side{nil, day(1), 5}, side{nil, day(1), 5}, true},
		{"no hash, same lastmod, different length", side{nil, day(1), 5}, side{nil, day(1), 6}, false},
		{"no hash, same lastmod, no length listed", side{nil, day(1), none}, side{nil, day(1), 6}, true},
		{"no hash, same lastmod, no length in the dump", side{nil, day(1), 5}, side{nil, day(1), none}, true},
		{"no hash, different lastmod", side{nil, day(1), 5}, side{nil, day(2), 5}, false},
		{"no hash, no lastmod listed", side{nil, time.Time{}, 5}, side{nil, day(1), 5}, false},
		{"no hash, no lastmod on either side, same length: nothing tells them apart", side{nil, time.Time{}, 5}, side{nil, time.Time{}, 5}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const uri = "http://example.com/a.txt"
			link := resourcesync.Link{Rel: copies.DumpRel, Href: "http://example.com/dump.zip", Path: "a.txt",
				Hashes: tc.dump.hashes, Length: tc.dump.length, Modified: tc.dump.lastmod}
			var d dumpCopies
			d.add(uri, dumpCopy{link: link, entry: resourcesync.Entry{Loc: uri, Lastmod: tc.dump.lastmod}, at: tc.dump.lastmod})
			r := &catalog.Resource{URI: uri, Hashes: tc.listed.hashes, Lastmod: tc.listed.lastmod, Length: tc.listed.length}
			d.attach(r)
			if tc.attached {
				assert.Equal(t, []resourcesync.Link{link}, r.Links, "the dump copy is an origin of the listed resource")
			} else {
				assert.Empty(t, r.Links, "a copy of another version is not an origin")
			}
			assert.Empty(t, d.unlisted(), "the resource is listed: its dump copy never becomes a resource of its own")
		})
	}
}
