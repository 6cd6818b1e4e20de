package catalog

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// awkwardURIs returns n URIs built from pieces that exercise every mapping
// rule, with duplicates.
func awkwardURIs(rng *rand.Rand, n int) []string {
	hosts := []string{"http://src.example", "HTTP://SRC.example:80", "http://localhost:8080",
		"https://mirror.example", "http://user@src.example", "http://[::1]:9000"}
	segs := []string{"a", "A", "b", "a%2Fb", "a%2fb", "a/b", "%41", "sp ace", "sp%20ace", ".", "..",
		"%2E", "%2e%2E", "_index", "a%252F", "a%2F", "x%00y", "x%0Ay", "x\ny", "q?x=%0D", "q?x=\r\x7f", "%25", "%zz", "caf%C3%A9", "café", "%FF",
		strings.Repeat("L", 300), strings.Repeat("é", 140) + "z", strings.Repeat("L", 244) + "~10bf7a1227", // printf 'L%.0s' $(seq 300) | sha256sum | cut -c1-10
		"q?x=1", "q?x=1/2", "q#f", "", "a~1234567890"}
	out := make([]string, 0, n)
	for len(out) < n {
		var b strings.Builder
		b.WriteString(hosts[rng.IntN(len(hosts))])
		depth := rng.IntN(4)
		for i := 0; i <= depth; i++ {
			b.WriteString("/")
			b.WriteString(segs[rng.IntN(len(segs))])
		}
		if rng.IntN(5) == 0 {
			b.WriteString("/")
		}
		out = append(out, b.String())
		if rng.IntN(10) == 0 { // a duplicate
			out = append(out, out[rng.IntN(len(out))])
		}
	}
	return out
}

// treeMap walks the tree and returns path → URI of every file, checking
// names on the way.
func treeMap(t *testing.T, c *Catalog) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(dir NodeID, prefix string)
	walk = func(dir NodeID, prefix string) {
		prev := ""
		c.ReadDir(dir, func(name string, id NodeID, a Attr) bool {
			require.True(t, name > prev, "sorted and unique: %q after %q", name, prev)
			prev = name
			require.NotEmpty(t, name)
			require.LessOrEqual(t, len(name), NameMax)
			require.False(t, strings.ContainsAny(name, "/\x00"), name)
			require.False(t, hasControl(name), "a control character in %q", name)
			require.NotEqual(t, ".", name)
			require.NotEqual(t, "..", name)
			got, ga, ok := c.Lookup(dir, name)
			require.True(t, ok, name)
			require.Equal(t, id, got)
			require.Equal(t, a, ga)
			if a.Dir {
				walk(id, prefix+name+"/")
				return true
			}
			r, ok := c.Resource(id)
			require.True(t, ok)
			_, dup := out[prefix+name]
			require.False(t, dup, "path shared: %s", prefix+name)
			out[prefix+name] = r.URI
			require.Equal(t, prefix+name, c.Path(id))
			return true
		})
	}
	walk(RootID, "")
	return out
}

// requireBijection checks that the live URIs and the file paths correspond
// one to one.
func requireBijection(t *testing.T, c *Catalog, live map[string]bool) map[string]string {
	t.Helper()
	paths := treeMap(t, c)
	require.Equal(t, len(live), len(paths), "one path per live URI")
	require.Equal(t, len(live), c.Len())
	seen := map[string]bool{}
	for p, uri := range paths {
		require.True(t, live[uri], "path %q holds a URI that is not live: %q", p, uri)
		require.False(t, seen[uri], "URI at two paths: %q", uri)
		seen[uri] = true
		id, ok := c.ByURI(uri)
		require.True(t, ok)
		require.Equal(t, p, c.Path(id))
	}
	inos := map[uint64]string{}
	for p := range paths {
		id, _ := c.ByURI(paths[p])
		a, _ := c.Attr(id)
		require.Greater(t, a.Ino, uint64(1))
		_, dup := inos[a.Ino]
		require.False(t, dup, "inode shared by %s and %s", p, inos[a.Ino])
		inos[a.Ino] = p
	}
	return paths
}

func TestPathBijectionProperty(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			uris := awkwardURIs(rng, 400)
			live := map[string]bool{}
			c1 := New(Options{Origin: testOrigin})
			for _, u := range uris {
				c1.Add(&Resource{URI: u, Length: int64(len(u))})
				live[u] = true
			}
			c1.Seal()
			paths1 := requireBijection(t, c1, live)
			require.Greater(t, c1.Stats().Renamed, 0, "the sample has collisions")
			indexFiles := 0
			for p := range paths1 {
				if strings.HasSuffix(p, "/"+IndexName) {
					indexFiles++
				}
			}
			require.Greater(t, indexFiles, 0, "the sample has _index files")

			rng.Shuffle(len(uris), func(i, j int) { uris[i], uris[j] = uris[j], uris[i] })
			c2 := New(Options{Origin: testOrigin})
			for _, u := range uris {
				c2.Add(&Resource{URI: u, Length: int64(len(u))})
			}
			c2.Seal()
			paths2 := requireBijection(t, c2, live)
			require.Equal(t, paths1, paths2, "the tree does not depend on Add order")
		})
	}
}

func TestPathBijectionUnderMutation(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			c := New(Options{Origin: testOrigin})
			live := map[string]bool{}
			for _, u := range awkwardURIs(rng, 200) {
				c.Add(&Resource{URI: u})
				live[u] = true
			}
			c.Seal()
			before := requireBijection(t, c, live)
			more := awkwardURIs(rng, 300)
			removed := map[string]bool{} // a URI removed and added again may take another path
			for _, u := range more {
				if live[u] && rng.IntN(2) == 0 {
					c.Remove(u)
					delete(live, u)
					removed[u] = true
					continue
				}
				c.Upsert(&Resource{URI: u, Length: 1})
				live[u] = true
			}
			after := requireBijection(t, c, live)
			for p, u := range before {
				if live[u] && !removed[u] {
					require.Equal(t, u, after[p], "existing paths never move: %q", p)
				}
			}
		})
	}
}

func TestNamesValidUTF8WhenInputIs(t *testing.T) {
	c := New(Options{Origin: testOrigin})
	u := "http://src.example/" + strings.Repeat("日本", 60) + "?" + strings.Repeat("é", 10)
	c.Add(&Resource{URI: u})
	c.Seal()
	id, _ := c.ByURI(u)
	p := c.Path(id)
	require.True(t, utf8.ValidString(p))
	require.LessOrEqual(t, len(p), NameMax)
}
