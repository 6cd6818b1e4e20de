package zipindex

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/resourcesync"
)

func TestConformanceSamplePackage(t *testing.T) {
	data, err := os.ReadFile("../resourcesync/testdata/conformance/sample-resourcedump-package.zip")
	require.NoError(t, err)
	ps := newPackageServer(t, data)
	p, err := ps.open(t, Options{})
	require.NoError(t, err)
	assert.Equal(t, int64(1), ps.requests.Load(), "a small package opens in one request")
	require.Len(t, p.Members, 3)
	assert.Equal(t, "manifest.xml", p.Members[0].Name)

	manifest, err := readMember(t, p, "manifest.xml", 0, 1<<20)
	require.NoError(t, err)
	doc, err := resourcesync.Parse(bytes.NewReader(manifest), "manifest.xml", resourcesync.Options{})
	require.NoError(t, err)
	assert.Equal(t, resourcesync.CapResourceDumpManifest, doc.Header.Capability())
	require.Len(t, doc.Entries, 2)
	for _, e := range doc.Entries {
		body, err := readMember(t, p, e.MD.Path, 0, 1<<20)
		require.NoError(t, err, e.MD.Path)
		sum := md5.Sum(body)
		require.Len(t, e.MD.Hashes, 1)
		assert.Equal(t, e.MD.Hashes[0].Value, hex.EncodeToString(sum[:]), e.MD.Path)
	}
	_, withSlash := p.Lookup("/resources/res1")
	_, without := p.Lookup("resources/res1")
	assert.True(t, withSlash)
	assert.True(t, without)
	assert.Equal(t, time.Date(2015, 5, 22, 16, 14, 0, 0, time.UTC).Year(), p.Members[1].Modified.Year())
}

func mixedEntries() []entry {
	return []entry{
		{name: "stored", data: textLike(5000, 1), method: MethodStored},
		{name: "deflated", data: textLike(300_000, 2), method: MethodDeflate},
		{name: "zstd", data: textLike(200_000, 3), method: MethodZstd},
		{name: "raw-stored", data: textLike(777, 4), method: MethodStored, raw: true},
		{name: "raw-deflated", data: textLike(100_000, 5), method: MethodDeflate, raw: true},
		{name: "empty", data: nil, method: MethodDeflate},
		{name: "dir/", data: nil, method: MethodStored},
	}
}

func TestMixedMethodsWholeAndRanges(t *testing.T) {
	entries := mixedEntries()
	ps := newPackageServer(t, buildZip(t, entries))
	p, err := ps.open(t, Options{})
	require.NoError(t, err)
	assert.LessOrEqual(t, ps.requests.Load(), int64(2))
	require.Len(t, p.Members, len(entries))
	for i, e := range entries {
		m := p.Members[i]
		assert.Equal(t, e.name, m.Name)
		assert.Equal(t, e.method, m.Method)
		assert.Equal(t, int64(len(e.data)), m.Size)
		assert.Equal(t, !e.raw && !strings.HasSuffix(e.name, "/"), m.hasDataDescriptor(), e.name)
		got, err := readMember(t, p, "/"+e.name, 0, m.Size)
		require.NoError(t, err, e.name)
		assert.Equal(t, len(e.data), len(got), e.name)
		assert.True(t, string(e.data) == string(got), e.name)
		if m.Size > 100 {
			off, n := m.Size/3, int64(77)
			got, err := readMember(t, p, e.name, off, n)
			require.NoError(t, err, e.name)
			assert.Equal(t, string(e.data[off:off+n]), string(got), e.name)
			tail, err := readMember(t, p, e.name, m.Size-10, 100)
			require.NoError(t, err, e.name)
			assert.Equal(t, string(e.data[m.Size-10:]), string(tail), e.name)
		}
	}
}

func TestLocalHeaderReadOnce(t *testing.T) {
	ps := newPackageServer(t, buildZip(t, mixedEntries()))
	p, err := ps.open(t, Options{})
	require.NoError(t, err)
	before := ps.requests.Load()
	_, err = readMember(t, p, "stored", 0, 10)
	require.NoError(t, err)
	assert.Equal(t, int64(2), ps.requests.Load()-before, "local header + data")
	_, err = readMember(t, p, "stored", 100, 10)
	require.NoError(t, err)
	assert.Equal(t, int64(3), ps.requests.Load()-before, "data only")
}

func TestZip64ManyMembers(t *testing.T) {
	const n = 70_000 // more than 65,535: archive/zip writes ZIP64 end records
	entries := make([]entry, n)
	for i := range entries {
		entries[i] = entry{name: memberName(i), data: []byte(memberName(i) + " body"), method: MethodStored}
	}
	data := buildZip(t, entries)
	ps := newPackageServer(t, data)
	p, err := ps.open(t, Options{})
	require.NoError(t, err)
	assert.LessOrEqual(t, ps.requests.Load(), int64(3), "directory larger than the tail read")
	assert.GreaterOrEqual(t, ps.requests.Load(), int64(2))
	require.Len(t, p.Members, n)
	for _, i := range []int{0, 65_535, 65_536, n - 1} {
		got, err := readMember(t, p, memberName(i), 0, 100)
		require.NoError(t, err)
		assert.Equal(t, memberName(i)+" body", string(got))
	}
	_, err = ps.open(t, Options{MaxMembers: 1000})
	require.ErrorIs(t, err, ErrHostile)
	_, err = ps.open(t, Options{MaxDirBytes: 1 << 20})
	require.ErrorIs(t, err, ErrHostile)
}
