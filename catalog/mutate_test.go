package catalog

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/resourcesync"
)

func sealedWith(t *testing.T, uris ...string) *Catalog {
	t.Helper()
	c := New(Options{Origin: testOrigin})
	for _, u := range uris {
		c.Add(&Resource{URI: u, Length: 1, Lastmod: t1})
	}
	c.Seal()
	return c
}

func TestUpsertNewFileCreatesDirectories(t *testing.T) {
	c := sealedWith(t, "http://src.example/a/x")
	a, _, _ := c.Lookup(RootID, "a")
	effects := c.Upsert(&Resource{URI: "http://src.example/a/b/c/f", Length: 9, Lastmod: t2})
	require.Len(t, effects, 3)
	b, _, ok := c.Lookup(a, "b")
	require.True(t, ok)
	cdir, _, ok := c.Lookup(b, "c")
	require.True(t, ok)
	f, fa, ok := c.Lookup(cdir, "f")
	require.True(t, ok)
	ba, _ := c.Attr(b)
	ca, _ := c.Attr(cdir)
	assert.Equal(t, []Effect{
		{Kind: EntryAdded, Parent: a, Name: "b", ID: b, Ino: ba.Ino},
		{Kind: EntryAdded, Parent: b, Name: "c", ID: cdir, Ino: ca.Ino},
		{Kind: EntryAdded, Parent: cdir, Name: "f", ID: f, Ino: fa.Ino},
	}, effects)
	// printf '\0dir\0a/b' | python3 -c 'import sys;h=0xcbf29ce484222325;[h:=((h^b)*0x100000001b3)%2**64 for b in sys.stdin.buffer.read()];print(h)'
	assert.Equal(t, uint64(3758775630628266200), ba.Ino, "same inode as a fresh Seal would give")
	assert.Equal(t, int64(9), fa.Size)
	aa, _ := c.Attr(a)
	assert.Equal(t, uint32(3), aa.Nlink)
	assert.True(t, aa.Mtime.Equal(t2), "mtime carried up")
	root, _ := c.Attr(RootID)
	assert.True(t, root.Mtime.Equal(t2))
	assert.Equal(t, 2, c.Len())
}

func TestUpsertNewVersion(t *testing.T) {
	c := sealedWith(t, "http://src.example/a/x")
	id, _ := c.ByURI("http://src.example/a/x")
	before := c.ContentID(id)
	old, ok := c.Version(id)
	require.True(t, ok)
	assert.Nil(t, c.Upsert(&Resource{URI: "http://src.example/a/x", Length: 1, Lastmod: t1}), "no change, no effect")
	effects := c.Upsert(&Resource{URI: "http://src.example/a/x", Length: 4, Lastmod: t2,
		Hashes: []resourcesync.Hash{{Alg: "sha-1", Value: "da39a3ee5e6b4b0d3255bfef95601890afd80709"}}})
	a, _, _ := c.Lookup(RootID, "a")
	attr, _ := c.Attr(id)
	require.Equal(t, []Effect{{Kind: ContentChanged, Parent: a, Name: "x", ID: id, Ino: attr.Ino, Old: &old}}, effects)
	assert.Equal(t, "http://src.example/a/x", old.Resource.URI)
	assert.Equal(t, int64(1), old.Attr.Size, "the version before the change")
	assert.NotEqual(t, old.Attr.Gen, attr.Gen, "a new version has a new Gen")
	assert.Equal(t, int64(4), attr.Size)
	assert.True(t, attr.Mtime.Equal(t2))
	assert.NotEqual(t, before, c.ContentID(id))
	assert.Equal(t, "sha-1:da39a3ee5e6b4b0d3255bfef95601890afd80709", c.ContentID(id))
}

func TestRemoveDeletesEmptyDirectories(t *testing.T) {
	c := sealedWith(t, "http://src.example/a/x", "http://src.example/a/b/c/f", "http://src.example/top")
	a, _, _ := c.Lookup(RootID, "a")
	b, ba, _ := c.Lookup(a, "b")
	cd, cda, _ := c.Lookup(b, "c")
	f, fa, _ := c.Lookup(cd, "f")
	fv, _ := c.Version(f)
	effects := c.Remove("http://src.example/a/b/c/f")
	assert.Equal(t, []Effect{
		{Kind: EntryRemoved, Parent: cd, Name: "f", ID: f, Ino: fa.Ino, Old: &fv},
		{Kind: EntryRemoved, Parent: b, Name: "c", ID: cd, Ino: cda.Ino},
		{Kind: EntryRemoved, Parent: a, Name: "b", ID: b, Ino: ba.Ino},
	}, effects)
	_, ok := c.Attr(f)
	assert.False(t, ok)
	_, ok = c.Attr(b)
	assert.False(t, ok)
	assert.False(t, c.ReadDir(b, func(string, NodeID, Attr) bool { return true }))
	_, _, ok = c.Lookup(a, "b")
	assert.False(t, ok)
	aa, _ := c.Attr(a)
	assert.Equal(t, uint32(2), aa.Nlink)
	_, ok = c.ByURI("http://src.example/a/b/c/f")
	assert.False(t, ok)
	assert.Nil(t, c.Remove("http://src.example/a/b/c/f"), "unknown URI")
	assert.Equal(t, 2, c.Len())

	// Removing the last file of a top-level directory removes it, not the root.
	x, xa, _ := c.Lookup(a, "x")
	xv, _ := c.Version(x)
	aAttr, _ := c.Attr(a)
	assert.Equal(t, []Effect{
		{Kind: EntryRemoved, Parent: a, Name: "x", ID: x, Ino: xa.Ino, Old: &xv},
		{Kind: EntryRemoved, Parent: RootID, Name: "a", ID: a, Ino: aAttr.Ino},
	}, c.Remove("http://src.example/a/x"))
	_, ok = c.Attr(RootID)
	assert.True(t, ok)

	// Created again: new node IDs, same inode numbers.
	c.Upsert(&Resource{URI: "http://src.example/a/b/c/f"})
	f2, ok := c.ByURI("http://src.example/a/b/c/f")
	require.True(t, ok)
	assert.NotEqual(t, f, f2)
	f2a, _ := c.Attr(f2)
	assert.Equal(t, fa.Ino, f2a.Ino)
	assert.Equal(t, "a/b/c/f", c.Path(f2))
}

func TestIndexFilesUnderMutation(t *testing.T) {
	c := sealedWith(t, "http://src.example/docs/", "http://src.example/page")
	docs, _, _ := c.Lookup(RootID, "docs")
	idx, _, ok := c.Lookup(docs, IndexName)
	require.True(t, ok)

	// /page/sub needs directory "page" while file "page" exists: the file
	// stays and the new directory is suffixed.
	effects := c.Upsert(&Resource{URI: "http://src.example/page/sub"})
	require.Len(t, effects, 2)
	// printf %s page | sha256sum | cut -c1-10
	assert.Equal(t, "page~3660315a9a", effects[0].Name)
	id, _ := c.ByURI("http://src.example/page/sub")
	assert.Equal(t, "page~3660315a9a/sub", c.Path(id))
	pid, _ := c.ByURI("http://src.example/page")
	assert.Equal(t, "page", c.Path(pid))

	// /docs is a file whose name is a directory: it is docs/_index, taken, so suffixed.
	c.Upsert(&Resource{URI: "http://src.example/docs"})
	did, _ := c.ByURI("http://src.example/docs")
	// printf %s http://src.example/docs | sha256sum | cut -c1-10
	assert.Equal(t, "docs/_index~80d8b5c8a6", c.Path(did))
	assert.Equal(t, "docs/_index", c.Path(idx), "existing path kept")

	// Removing docs/_index keeps the directory while the other file is there.
	iv, _ := c.Version(idx)
	effects = c.Remove("http://src.example/docs/")
	require.Len(t, effects, 1)
	assert.Equal(t, Effect{Kind: EntryRemoved, Parent: docs, Name: IndexName, ID: idx, Ino: effects[0].Ino, Old: &iv}, effects[0])
	c.Remove("http://src.example/docs")
	_, ok = c.Attr(docs)
	assert.False(t, ok, "empty directory removed")
}

func TestConcurrentReadersDuringUpsert(t *testing.T) {
	c := New(Options{Origin: testOrigin})
	for i := range 500 {
		c.Add(&Resource{URI: fmt.Sprintf("http://src.example/d%d/f%d", i%10, i), Length: int64(i), Lastmod: t1})
	}
	c.Seal()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				d, _, ok := c.Lookup(RootID, fmt.Sprintf("d%d", (n+r)%10))
				if !ok {
					continue
				}
				c.ReadDir(d, func(name string, id NodeID, a Attr) bool {
					if res, ok := c.Resource(id); ok && !a.Dir {
						_ = c.ContentID(id)
						_ = res.URI
					}
					return true
				})
				c.Attr(d)
				c.Path(d)
			}
		}()
	}
	deadline := time.After(10 * time.Second)
	for i := range 500 {
		u := fmt.Sprintf("http://src.example/d%d/g%d", i%12, i)
		c.Upsert(&Resource{URI: u, Length: 1, Lastmod: t2})
		c.Upsert(&Resource{URI: fmt.Sprintf("http://src.example/d%d/f%d", i%10, i), Length: 2, Lastmod: t2})
		if i%3 == 0 {
			c.Remove(u)
		}
		select {
		case <-deadline:
			t.Fatal("timed out")
		default:
		}
	}
	close(stop)
	wg.Wait()
	assert.Equal(t, 500+500-167, c.Len())
}

func TestAddConcurrent(t *testing.T) {
	c := New(Options{Origin: testOrigin})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 250 {
				c.Add(&Resource{URI: fmt.Sprintf("http://src.example/w%d/%d", w, i), Lastmod: t1})
				c.Add(&Resource{URI: fmt.Sprintf("http://src.example/shared/%d", i), Lastmod: t1})
			}
		}()
	}
	wg.Wait()
	c.Seal()
	assert.Equal(t, 1250, c.Len())
	s, _, ok := c.Lookup(RootID, "shared")
	require.True(t, ok)
	n := 0
	c.ReadDir(s, func(string, NodeID, Attr) bool { n++; return true })
	assert.Equal(t, 250, n)
}

// Properties are part of a version: a new title is a change the kernel is
// told about, the same one is not.
func TestUpsertProps(t *testing.T) {
	c := New(Options{Origin: "http://example.org", Protocol: "atompmh"})
	uri := "http://example.org/rec/a.xml"
	r := &Resource{URI: uri, Length: 1, Props: []Property{{Name: "title", Value: "A"}}}
	if err := c.Add(r); err != nil {
		t.Fatal(err)
	}
	if err := c.Seal(); err != nil {
		t.Fatal(err)
	}
	if got := c.Upsert(r); len(got) != 0 {
		t.Fatalf("same properties: effects %v", got)
	}
	r2 := *r
	r2.Props = []Property{{Name: "title", Value: "B"}}
	got := c.Upsert(&r2)
	if len(got) != 1 || got[0].Kind != ContentChanged {
		t.Fatalf("new title: effects %v, want one ContentChanged", got)
	}
	dir, _, _ := c.Lookup(RootID, "rec")
	id, _, _ := c.Lookup(dir, "a.xml")
	res, _ := c.Resource(id)
	if len(res.Props) != 1 || res.Props[0].Value != "B" || c.Protocol() != "atompmh" {
		t.Fatalf("resource %+v protocol %q", res, c.Protocol())
	}
	if err := c.SaveSnapshot(t.TempDir()+"/s", nil); err == nil {
		t.Fatal("a snapshot of an atompmh catalog was written; it would come back without its properties")
	}
}

// Gen moves with what the bytes depend on (length, lastmod, hashes) and
// with nothing else: a new media type is the same version, and its change
// carries no old version.
func TestGenChangesWithTheContentOnly(t *testing.T) {
	c := sealedWith(t, "http://src.example/a/x")
	id, _ := c.ByURI("http://src.example/a/x")
	gen := func() uint64 {
		a, ok := c.Attr(id)
		require.True(t, ok)
		return a.Gen
	}
	g0 := gen()
	effects := c.Upsert(&Resource{URI: "http://src.example/a/x", Length: 1, Lastmod: t1, Type: "text/plain"})
	require.Len(t, effects, 1)
	assert.Nil(t, effects[0].Old, "same version, nothing to keep")
	assert.Equal(t, g0, gen(), "a new type is not a new version")

	seen := map[uint64]string{g0: "first"}
	for _, step := range []struct {
		name string
		r    *Resource
	}{
		{"length", &Resource{URI: "http://src.example/a/x", Length: 2, Lastmod: t1, Type: "text/plain"}},
		{"lastmod", &Resource{URI: "http://src.example/a/x", Length: 2, Lastmod: t2, Type: "text/plain"}},
		{"hash", &Resource{URI: "http://src.example/a/x", Length: 2, Lastmod: t2, Type: "text/plain",
			Hashes: []resourcesync.Hash{{Alg: "md5", Value: "5eb63bbbe01eeed093cb22bb8f5acdc3"}}}},
	} {
		name, r := step.name, step.r
		before := gen()
		effects := c.Upsert(r)
		require.Len(t, effects, 1, name)
		require.NotNil(t, effects[0].Old, name)
		assert.Equal(t, before, effects[0].Old.Attr.Gen, name)
		g := gen()
		assert.NotContains(t, seen, g, "a new %s is a new Gen", name)
		seen[g] = name
	}
}
