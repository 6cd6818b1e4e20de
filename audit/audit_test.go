package audit

import (
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
	"rsfs/resourcesync"
)

func TestCheckFile(t *testing.T) {
	open := func(body string) opener {
		return func(string, *catalog.Resource) (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(body)), nil
		}
	}
	hello := &catalog.Resource{URI: "http://x/a", Length: 5, Hashes: []resourcesync.Hash{
		{Alg: "md5", Value: "5d41402abc4b2a76b9719d911017c592"},
		{Alg: "sha-1", Value: "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"},
		{Alg: "sha-256", Value: "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"},
		{Alg: "x-unknown", Value: "zz"},
	}}
	assert.Empty(t, checkFile("a", hello, open("hello")))
	assert.Equal(t, "6 bytes, published length 5", checkFile("a", hello, open("hello!")))
	assert.Equal(t, "md5 is c983190483df167d2a3841463c2a9341, published 5d41402abc4b2a76b9719d911017c592", checkFile("a", hello, open("hellp")))
	sha1 := &catalog.Resource{URI: "http://x/a", Length: resourcesync.NoLength, Hashes: hello.Hashes[1:2]}
	assert.Empty(t, checkFile("a", sha1, open("hello")))
	assert.Contains(t, checkFile("a", sha1, open("hellp")), "sha-1 is ")
	sha256 := &catalog.Resource{URI: "http://x/a", Length: resourcesync.NoLength, Hashes: hello.Hashes[2:]}
	assert.Empty(t, checkFile("a", sha256, open("hello")))
	assert.Contains(t, checkFile("a", sha256, open("hellp")), "sha-256 is ")
	assert.Contains(t, checkFile("a", sha256, func(string, *catalog.Resource) (io.ReadCloser, error) {
		return nil, os.ErrNotExist
	}), "could not be read")
}

func TestPick(t *testing.T) {
	files := map[string]*catalog.Resource{}
	for _, p := range []string{"a", "b", "c", "d"} {
		files[p] = &catalog.Resource{URI: "http://x/" + p, Lastmod: time.Unix(0, 0)}
	}
	assert.Len(t, pick(files, 2), 2)
	assert.Len(t, pick(files, 10), 4)
	assert.Empty(t, pick(files, 0))
	assert.Empty(t, pick(nil, 3))
}

// TestCompareReportsWhereTheMountShows compares by URI and reports each
// difference at the path the mount shows it (created: where the Source's
// mapping puts it), and reads only the files the mount shows in the
// Source's version.
func TestCompareReportsWhereTheMountShows(t *testing.T) {
	const origin = "http://x"
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res := func(name string, lastmod time.Time) *catalog.Resource {
		return &catalog.Resource{URI: origin + "/" + name, Length: 1, Lastmod: lastmod}
	}
	truth := catalog.New(catalog.Options{Origin: origin})
	for _, r := range []*catalog.Resource{res("same", at), res("changed", at.Add(time.Hour)), res("new", at)} {
		require.NoError(t, truth.Add(r))
	}
	require.NoError(t, truth.Seal())
	s := &shown{cat: catalog.New(catalog.Options{Origin: origin}), paths: map[string]string{}}
	for _, r := range []*catalog.Resource{res("same", at), res("changed", at), res("gone", at)} {
		require.NoError(t, s.cat.Add(r))
		s.paths[r.URI] = "shown/" + strings.TrimPrefix(r.URI, origin+"/")
	}
	require.NoError(t, s.cat.Seal())

	var rep Report
	d := rep.compare(s.cat, s.pathOf, truth)
	assert.Equal(t, []string{"new"}, rep.Created)
	assert.Equal(t, []string{"shown/changed"}, rep.Updated)
	assert.Equal(t, []string{"shown/gone"}, rep.Deleted)
	same := files(truth, sameIn(s.cat, truth, d), s.pathOf)
	assert.Equal(t, []string{"shown/same"}, keys(same))
	assert.Equal(t, origin+"/same", same["shown/same"].URI)
}

func keys(m map[string]*catalog.Resource) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
