package catalog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/atomicfile"
	"rsfs/resourcesync"
)

// snapResource makes a resource for uri with varied metadata: unknown
// lengths and lastmods, zones, every kind of hash, types and links.
func snapResource(rng *rand.Rand, uri string) *Resource {
	r := &Resource{URI: uri, Length: int64(rng.IntN(1 << 30))}
	if rng.IntN(8) == 0 {
		r.Length = resourcesync.NoLength
	}
	zones := []*time.Location{time.UTC, time.FixedZone("", 2*3600), time.FixedZone("", -(5*3600 + 30*60))}
	if rng.IntN(8) != 0 {
		r.Lastmod = time.Unix(1_600_000_000+rng.Int64N(1e8), rng.Int64N(1e9)).In(zones[rng.IntN(len(zones))])
	}
	switch rng.IntN(5) {
	case 0:
		r.Hashes = []resourcesync.Hash{{Alg: "md5", Value: fmt.Sprintf("%032x", rng.Uint64())}}
	case 1:
		r.Hashes = []resourcesync.Hash{{Alg: "sha-1", Value: fmt.Sprintf("%040x", rng.Uint64())},
			{Alg: "sha-256", Value: fmt.Sprintf("%064x", rng.Uint64())}}
	case 2:
		r.Hashes = []resourcesync.Hash{{Alg: "x-crc", Value: "abc"}, {Alg: "md5", Value: "not-hex"}}
	}
	r.Type = []string{"", "text/plain", "image/png", "application/xml"}[rng.IntN(4)]
	if rng.IntN(4) == 0 {
		r.Links = []resourcesync.Link{{Rel: "duplicate", Href: "http://mirror.example/" + fmt.Sprint(rng.IntN(100)),
			Pri: rng.IntN(3), Length: resourcesync.NoLength, Modified: r.Lastmod, Type: r.Type,
			Hashes: r.Hashes, Path: "/p"}}
	}
	return r
}

// awkwardCatalog builds a sealed catalog of awkward URIs and changes it
// after Seal (new files, new versions, removals). It returns every URI used.
func awkwardCatalog(t testing.TB, seed uint64) (*Catalog, []string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	c := New(Options{Origin: testOrigin})
	uris := awkwardURIs(rng, 300)
	for _, u := range uris {
		c.Add(snapResource(rng, u))
	}
	c.Seal()
	more := awkwardURIs(rng, 200)
	for _, u := range more {
		if rng.IntN(3) == 0 {
			c.Remove(u)
			continue
		}
		c.Upsert(snapResource(rng, u))
	}
	for _, u := range uris[:100] {
		c.Remove(u)
	}
	return c, append(uris, more...)
}

// mutateBoth applies the same random changes to two catalogs and requires
// the same effects.
func mutateBoth(t *testing.T, seed uint64, a, b *Catalog) []string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 5))
	uris := awkwardURIs(rng, 150)
	for _, u := range uris {
		r := snapResource(rng, u)
		if rng.IntN(3) == 0 {
			require.Equal(t, a.Remove(u), b.Remove(u), "remove %s", u)
			continue
		}
		require.Equal(t, a.Upsert(r), b.Upsert(r), "upsert %s", u)
	}
	return uris
}

type linkView struct {
	resourcesync.Link
	Modified string
}

type resourceView struct {
	URI     string
	Length  int64
	Lastmod string
	Hashes  []resourcesync.Hash
	Type    string
	Links   []linkView
}

func viewResource(r *Resource, ok bool) (resourceView, bool) {
	if !ok {
		return resourceView{}, false
	}
	v := resourceView{URI: r.URI, Length: r.Length, Lastmod: r.Lastmod.Format(time.RFC3339Nano), Hashes: r.Hashes, Type: r.Type}
	for _, l := range r.Links {
		m := l.Modified.Format(time.RFC3339Nano)
		l.Modified = time.Time{}
		v.Links = append(v.Links, linkView{Link: l, Modified: m})
	}
	return v, true
}

// requireSameCatalog compares every answer of two catalogs, node by node.
func requireSameCatalog(t *testing.T, want, got *Catalog, uris []string) {
	t.Helper()
	require.Equal(t, want.Stats(), got.Stats())
	require.Equal(t, want.Len(), got.Len())
	require.Equal(t, want.Sealed(), got.Sealed())
	for id := NodeID(0); id < want.files.next+2; id++ {
		requireSameNode(t, want, got, id)
	}
	for i := 0; i < len(want.dirs)+2; i++ {
		requireSameNode(t, want, got, dirID(uint32(i)))
	}
	for _, u := range uris {
		wid, wok := want.ByURI(u)
		gid, gok := got.ByURI(u)
		require.Equal(t, wok, gok, u)
		require.Equal(t, wid, gid, u)
	}
}

func requireSameNode(t *testing.T, want, got *Catalog, id NodeID) {
	t.Helper()
	wa, wok := want.Attr(id)
	ga, gok := got.Attr(id)
	require.Equal(t, wok, gok, "%#x", uint32(id))
	require.Equal(t, wa, ga, "%#x", uint32(id))
	require.Equal(t, want.Path(id), got.Path(id))
	wp, wpok := want.Parent(id)
	gp, gpok := got.Parent(id)
	require.Equal(t, wpok, gpok)
	require.Equal(t, wp, gp)
	require.Equal(t, want.ContentID(id), got.ContentID(id))
	require.Equal(t, want.Hashes(id), got.Hashes(id))
	wr, wrok := viewResource(want.Resource(id))
	gr, grok := viewResource(got.Resource(id))
	require.Equal(t, wrok, grok)
	require.Equal(t, wr, gr)
	wc, wcok := want.Children(id)
	gc, gcok := got.Children(id)
	require.Equal(t, wcok, gcok)
	require.Equal(t, wc, gc)
	for _, e := range wc {
		gid, gattr, ok := got.Lookup(id, e.Name)
		require.True(t, ok, e.Name)
		require.Equal(t, e.ID, gid)
		require.Equal(t, e.Attr, gattr)
	}
}

func snapshotBytes(t testing.TB, c *Catalog, state []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, c.WriteSnapshot(&buf, state))
	return buf.Bytes()
}

func TestSnapshotRoundTripAwkward(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			c, uris := awkwardCatalog(t, seed)
			require.Greater(t, c.Stats().Renamed, 0, "the sample has collisions")
			state := []byte(`{"changelist":"http://src.example/cl.xml","at":"2025-01-01T00:00:00Z"}`)
			data := snapshotBytes(t, c, state)

			loaded, gotState, err := ReadSnapshot(bytes.NewReader(data), Options{Origin: testOrigin})
			require.NoError(t, err)
			assert.Equal(t, state, gotState)
			requireSameCatalog(t, c, loaded, uris)
			assert.Equal(t, data, snapshotBytes(t, loaded, state), "a loaded catalog writes the same snapshot")

			more := mutateBoth(t, seed, c, loaded)
			requireSameCatalog(t, c, loaded, append(uris, more...))
			requireBijection(t, loaded, liveURIs(c, append(uris, more...)))
		})
	}
}

func liveURIs(c *Catalog, uris []string) map[string]bool {
	live := map[string]bool{}
	for _, u := range uris {
		if _, ok := c.ByURI(u); ok {
			live[u] = true
		}
	}
	return live
}

func TestSnapshotKeepsIDsPathsAndInodes(t *testing.T) {
	c := New(Options{Origin: testOrigin})
	rs := []*Resource{
		{URI: "http://src.example/a", Length: 1, Lastmod: t1},
		{URI: "http://src.example/a/", Length: 2, Lastmod: t2},
		{URI: "http://src.example/a/b", Length: 3, Lastmod: t3},
		{URI: "http://src.example/aA", Length: 4, Lastmod: t1},
		{URI: "http://src.example/a%41", Length: 5, Lastmod: t1},
		{URI: "http://localhost:8080/x?q=1/2", Length: 6, Lastmod: t1},
		{URI: "http://src.example/" + strings.Repeat("L", 300), Length: 7, Lastmod: t1},
	}
	for _, r := range rs {
		c.Add(r)
	}
	c.Seal()
	c.Upsert(&Resource{URI: "http://src.example/a%2541", Length: 8, Lastmod: t2})
	c.Remove("http://src.example/aA")

	path := filepath.Join(t.TempDir(), "catalog.snap")
	require.NoError(t, c.SaveSnapshot(path, nil))
	loaded, state, err := LoadSnapshot(path, Options{Origin: "HTTP://src.example:80"})
	require.NoError(t, err)
	assert.Nil(t, state)

	want := map[string]string{
		"http://src.example/a":          "a/_index",
		"http://src.example/a/":         "a/_index~cbda5e3512", // printf %s http://src.example/a/ | sha256sum | cut -c1-10
		"http://src.example/a/b":        "a/b",
		"http://src.example/a%41":       "aA",
		"http://localhost:8080/x?q=1/2": "@localhost:8080/x?q=1%2F2",
		"http://src.example/a%2541":     "a%2541",
	}
	for uri, p := range want {
		id, ok := loaded.ByURI(uri)
		require.True(t, ok, uri)
		origID, _ := c.ByURI(uri)
		assert.Equal(t, origID, id, "NodeID kept: %s", uri)
		assert.Equal(t, p, loaded.Path(id), uri)
		a, _ := loaded.Attr(id)
		oa, _ := c.Attr(origID)
		assert.Equal(t, oa.Ino, a.Ino)
	}
	_, gone := loaded.ByURI("http://src.example/aA")
	assert.False(t, gone)
	long, _ := loaded.ByURI("http://src.example/" + strings.Repeat("L", 300))
	assert.Len(t, loaded.Path(long), NameMax)
	r, ok := loaded.Resource(long)
	require.True(t, ok)
	assert.Equal(t, "2024-01-02T03:04:05Z", r.Lastmod.Format(time.RFC3339))
	b, _ := loaded.ByURI("http://src.example/a/b")
	r, _ = loaded.Resource(b)
	assert.Equal(t, "2025-03-01T12:00:00+02:00", r.Lastmod.Format(time.RFC3339), "zone kept")
	root, _ := loaded.Attr(RootID)
	assert.True(t, root.Mtime.Equal(t3))
	assert.Equal(t, uint64(1), root.Ino)
}

func TestSnapshotLoadedCatalogAcceptsChanges(t *testing.T) {
	c := sealedWith(t, "http://src.example/d/x", "http://src.example/d/y", "http://src.example/e/z")
	loaded, _, err := ReadSnapshot(bytes.NewReader(snapshotBytes(t, c, nil)), Options{Origin: testOrigin})
	require.NoError(t, err)

	effects := loaded.Upsert(&Resource{URI: "http://src.example/d/new/f", Length: 9, Lastmod: t2})
	require.Len(t, effects, 2)
	d, _, _ := loaded.Lookup(RootID, "d")
	nd, na, ok := loaded.Lookup(d, "new")
	require.True(t, ok)
	assert.Equal(t, Effect{Kind: EntryAdded, Parent: d, Name: "new", ID: nd, Ino: na.Ino}, effects[0])
	// printf '\0dir\0d/new' | python3 -c 'import sys;h=0xcbf29ce484222325;[h:=((h^b)*0x100000001b3)%2**64 for b in sys.stdin.buffer.read()];print(h)'
	assert.Equal(t, uint64(8689745842144653455), na.Ino)
	f, fa, ok := loaded.Lookup(nd, "f")
	require.True(t, ok)
	assert.Equal(t, int64(9), fa.Size)
	assert.Equal(t, NodeID(4), f, "IDs continue after the loaded ones")

	x, _ := loaded.ByURI("http://src.example/d/x")
	xv, _ := loaded.Version(x)
	effects = loaded.Upsert(&Resource{URI: "http://src.example/d/x", Length: 5, Lastmod: t3})
	xa, _ := loaded.Attr(x)
	assert.Equal(t, []Effect{{Kind: ContentChanged, Parent: d, Name: "x", ID: x, Ino: xa.Ino, Old: &xv}}, effects)
	assert.Equal(t, int64(5), xa.Size)

	e, ea, _ := loaded.Lookup(RootID, "e")
	z, za, _ := loaded.Lookup(e, "z")
	zv, _ := loaded.Version(z)
	effects = loaded.Remove("http://src.example/e/z")
	assert.Equal(t, []Effect{
		{Kind: EntryRemoved, Parent: e, Name: "z", ID: z, Ino: za.Ino, Old: &zv},
		{Kind: EntryRemoved, Parent: RootID, Name: "e", ID: e, Ino: ea.Ino},
	}, effects)
	_, _, ok = loaded.Lookup(RootID, "e")
	assert.False(t, ok)
	assert.Equal(t, 3, loaded.Len())

	// A name taken by an existing file gets the suffix, as in the original.
	effects = loaded.Upsert(&Resource{URI: "http://src.example/d/%78", Length: 1})
	require.Len(t, effects, 1)
	// printf %s 'http://src.example/d/%78' | sha256sum | cut -c1-10
	assert.Equal(t, "x~4b897a1089", effects[0].Name)
}

func TestSnapshotRejectsCorruption(t *testing.T) {
	c, _ := awkwardCatalog(t, 3)
	data := snapshotBytes(t, c, []byte("state"))
	rng := rand.New(rand.NewPCG(8, 9))
	positions := []int{len(data) - 1}
	for i := 0; i < len(data); i += 1 + i/64 {
		positions = append(positions, i)
	}
	for range 200 {
		positions = append(positions, rng.IntN(len(data)))
	}
	bad := make([]byte, len(data))
	for _, pos := range positions {
		copy(bad, data)
		bad[pos] ^= byte(1 << rng.IntN(8))
		loaded, state, err := ReadSnapshot(bytes.NewReader(bad), Options{Origin: testOrigin})
		require.ErrorIs(t, err, ErrCorruptSnapshot, "byte %d of %d changed", pos, len(data))
		require.Nil(t, loaded)
		require.Nil(t, state)
	}
	t.Logf("%d corruptions of a %d-byte snapshot rejected", len(positions), len(data))
}

// resealed recomputes a damaged snapshot's checksums, so only the checks of
// its structure stand between it and a catalog.
func resealed(data []byte) []byte {
	out := bytes.Clone(data)
	binary.LittleEndian.PutUint32(out[20:], crc32.Checksum(out[:20], castagnoli))
	end := len(out) - trailerSize
	binary.LittleEndian.PutUint32(out[end:], crc32.Checksum(out[:end], castagnoli))
	return out
}

var damageSeed, damageRounds = uint64(10), 300

func TestSnapshotDamageWithValidChecksumNeverPanics(t *testing.T) {
	c, _ := awkwardCatalog(t, 6)
	data := snapshotBytes(t, c, nil)
	rng := rand.New(rand.NewPCG(damageSeed, 11))
	rejected := 0
	for range damageRounds {
		bad := bytes.Clone(data)
		for range 1 + rng.IntN(3) {
			bad[headerSize+rng.IntN(len(bad)-headerSize-trailerSize)] ^= byte(1 + rng.IntN(255))
		}
		loaded, _, err := ReadSnapshot(bytes.NewReader(resealed(bad)), Options{Origin: testOrigin})
		if err != nil {
			require.True(t, errors.Is(err, ErrCorruptSnapshot) || errors.Is(err, ErrSnapshotOrigin), err)
			rejected++
			continue
		}
		// Accepted (the damage hit free-form values): every query still works.
		for id := NodeID(1); id < loaded.files.next; id++ {
			loaded.Resource(id)
			loaded.ContentID(id)
			loaded.Path(id)
		}
		for i := range loaded.dirs {
			loaded.Children(dirID(uint32(i)))
			loaded.Path(dirID(uint32(i)))
		}
		loaded.Upsert(&Resource{URI: "http://src.example/new/file", Length: 1})
	}
	t.Logf("%d of %d damaged snapshots with valid checksums rejected by the structure checks", rejected, damageRounds)
	assert.Greater(t, rejected, damageRounds/10)
}

func TestSnapshotRejectsTruncation(t *testing.T) {
	c, _ := awkwardCatalog(t, 4)
	data := snapshotBytes(t, c, []byte("state"))
	dir := t.TempDir()
	for n := 0; n < len(data); n += 1 + n/32 {
		_, _, err := ReadSnapshot(bytes.NewReader(data[:n]), Options{Origin: testOrigin})
		require.ErrorIs(t, err, ErrCorruptSnapshot, "%d of %d bytes", n, len(data))
	}
	path := filepath.Join(dir, "snap")
	require.NoError(t, os.WriteFile(path, data[:len(data)-1], 0o600))
	loaded, _, err := LoadSnapshot(path, Options{Origin: testOrigin})
	require.ErrorIs(t, err, ErrCorruptSnapshot)
	assert.Contains(t, err.Error(), "truncated")
	assert.Nil(t, loaded)

	require.NoError(t, os.WriteFile(path, append(bytes.Clone(data), 0), 0o600))
	_, _, err = LoadSnapshot(path, Options{Origin: testOrigin})
	require.ErrorIs(t, err, ErrCorruptSnapshot, "trailing bytes")

	_, _, err = ReadSnapshot(strings.NewReader("RSFSCAT2"+strings.Repeat("\x00", 40)), Options{Origin: testOrigin})
	require.ErrorIs(t, err, ErrCorruptSnapshot)
	assert.Contains(t, err.Error(), "not a catalog snapshot")
}

func TestSnapshotRejectsOtherOrigin(t *testing.T) {
	c := sealedWith(t, "http://src.example/a")
	data := snapshotBytes(t, c, nil)
	loaded, _, err := ReadSnapshot(bytes.NewReader(data), Options{Origin: "http://other.example"})
	require.ErrorIs(t, err, ErrSnapshotOrigin)
	assert.Contains(t, err.Error(), `"http://src.example"`)
	assert.Nil(t, loaded)
	_, _, err = ReadSnapshot(bytes.NewReader(data), Options{Origin: "https://src.example"})
	require.ErrorIs(t, err, ErrSnapshotOrigin)
	_, _, err = ReadSnapshot(bytes.NewReader(data), Options{Origin: "HTTP://SRC.EXAMPLE:80/"})
	require.NoError(t, err, "the same origin, spelt otherwise")
	loaded, _, err = ReadSnapshot(bytes.NewReader(data), Options{})
	require.NoError(t, err, "no origin asked: the saved one")
	assert.Equal(t, 1, loaded.Len())
}

func TestSnapshotOfEmptyCatalog(t *testing.T) {
	c := New(Options{Origin: testOrigin})
	c.Seal()
	loaded, _, err := ReadSnapshot(bytes.NewReader(snapshotBytes(t, c, nil)), Options{Origin: testOrigin})
	require.NoError(t, err)
	requireSameCatalog(t, c, loaded, nil)
	effects := loaded.Upsert(&Resource{URI: "http://src.example/first", Length: 1})
	require.Len(t, effects, 1)
	assert.Equal(t, "first", effects[0].Name)
}

func TestSortByHome(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	entries := make([]uint64, 5000)
	for i := range entries {
		entries[i] = rng.Uint64()
	}
	sortByHome(entries, 32+11)
	for i := 1; i < len(entries); i++ {
		require.LessOrEqual(t, entries[i-1]>>43, entries[i]>>43)
	}
}

func TestSnapshotOfUnsealedCatalogFails(t *testing.T) {
	c := New(Options{Origin: testOrigin})
	c.Add(&Resource{URI: "http://src.example/a"})
	err := c.WriteSnapshot(io.Discard, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not sealed")
}

func TestSaveSnapshotIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "catalog.snap")
	c := sealedWith(t, "http://src.example/a", "http://src.example/b")
	require.NoError(t, c.SaveSnapshot(path, []byte("v1")))
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	c.Upsert(&Resource{URI: "http://src.example/c", Length: 3})
	failAfter := len(before) / 2
	err = atomicfile.Write(path, func(w io.Writer) error {
		return c.WriteSnapshot(&failingWriter{w: w, left: failAfter}, []byte("v2"))
	})
	require.ErrorIs(t, err, errDiskFull)
	unsealed := New(Options{Origin: testOrigin})
	require.Error(t, unsealed.SaveSnapshot(path, []byte("v3")))

	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the old snapshot is intact")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file left behind")
	loaded, state, err := LoadSnapshot(path, Options{Origin: testOrigin})
	require.NoError(t, err)
	assert.Equal(t, []byte("v1"), state)
	assert.Equal(t, 2, loaded.Len())

	require.NoError(t, c.SaveSnapshot(path, []byte("v2")))
	loaded, state, err = LoadSnapshot(path, Options{Origin: testOrigin})
	require.NoError(t, err)
	assert.Equal(t, []byte("v2"), state)
	assert.Equal(t, 3, loaded.Len())
}

var errDiskFull = errors.New("disk full")

type failingWriter struct {
	w    io.Writer
	left int
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.left {
		n, _ := f.w.Write(p[:f.left])
		f.left = 0
		return n, errDiskFull
	}
	f.left -= len(p)
	return f.w.Write(p)
}

func TestSnapshotPortableRecordCodec(t *testing.T) {
	require.True(t, rawRecords, "this host copies records as bytes")
	c, uris := awkwardCatalog(t, 5)
	raw := snapshotBytes(t, c, nil)
	rawRecords = false
	defer func() { rawRecords = true }()
	assert.Equal(t, raw, snapshotBytes(t, c, nil), "field-by-field encoding is the same bytes")
	loaded, _, err := ReadSnapshot(bytes.NewReader(raw), Options{Origin: testOrigin})
	require.NoError(t, err)
	requireSameCatalog(t, c, loaded, uris)
}

func TestSnapshotOversizedArenaItems(t *testing.T) {
	c := New(Options{Origin: testOrigin})
	big1 := "http://src.example/big/" + strings.Repeat("x", arenaChunkSize+10)
	big2 := "http://src.example/big/" + strings.Repeat("y", 2*arenaChunkSize)
	uris := []string{"http://src.example/small", big1, big2, "http://src.example/after"}
	for _, u := range uris {
		c.Add(&Resource{URI: u, Length: 1, Lastmod: t1})
	}
	c.Seal()
	hasAbsent := false
	for _, ch := range c.arena.chunks {
		hasAbsent = hasAbsent || ch == nil
	}
	require.True(t, hasAbsent, "two oversized items in a row leave an absent chunk slot")
	data := snapshotBytes(t, c, nil)
	loaded, _, err := ReadSnapshot(bytes.NewReader(data), Options{Origin: testOrigin})
	require.NoError(t, err)
	requireSameCatalog(t, c, loaded, uris)
	assert.Equal(t, data, snapshotBytes(t, loaded, nil))
	loaded.Upsert(&Resource{URI: "http://src.example/later", Length: 2})
	c.Upsert(&Resource{URI: "http://src.example/later", Length: 2})
	requireSameCatalog(t, c, loaded, append(uris, "http://src.example/later"))
}

func TestSnapshotTypeOverflow(t *testing.T) {
	if testing.Short() {
		t.Skip("adds 65,600 resources")
	}
	c := New(Options{Origin: testOrigin})
	const n = typeTableMax + 64
	for i := range n {
		c.Add(&Resource{URI: fmt.Sprintf("http://src.example/t/%d", i), Type: fmt.Sprintf("x/t%d", i)})
	}
	c.Seal()
	require.Equal(t, n, c.Stats().Types)
	loaded, _, err := ReadSnapshot(bytes.NewReader(snapshotBytes(t, c, nil)), Options{Origin: testOrigin})
	require.NoError(t, err)
	require.Equal(t, c.Stats(), loaded.Stats())
	for _, i := range []int{0, typeTableMax - 2, typeTableMax, n - 1} {
		id, ok := loaded.ByURI(fmt.Sprintf("http://src.example/t/%d", i))
		require.True(t, ok)
		r, _ := loaded.Resource(id)
		assert.Equal(t, fmt.Sprintf("x/t%d", i), r.Type)
	}
}

func TestSnapshotConcurrentWithChanges(t *testing.T) {
	c := buildBench(20_000)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 2000 {
			c.Upsert(&Resource{URI: fmt.Sprintf("http://127.0.0.1:8080/extra/%d", i), Length: int64(i)})
		}
	}()
	for range 5 {
		data := snapshotBytes(t, c, nil)
		loaded, _, err := ReadSnapshot(bytes.NewReader(data), Options{Origin: benchOrigin})
		require.NoError(t, err)
		require.GreaterOrEqual(t, loaded.Len(), 20_000)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("upserts did not finish")
	}
}

// BenchmarkSnapshotSave1M saves 1,000,000 resources (write, fsync, rename);
// run with -benchtime=1x or a few.
func BenchmarkSnapshotSave1M(b *testing.B) {
	c := buildBench(1_000_000)
	path := filepath.Join(b.TempDir(), "catalog.snap")
	for b.Loop() {
		require.NoError(b, c.SaveSnapshot(path, []byte(`{"positions":{}}`)))
	}
	info, err := os.Stat(path)
	require.NoError(b, err)
	b.ReportMetric(float64(info.Size())/1e6, "MB")
	b.ReportMetric(float64(info.Size())/1e6, "B/resource") // 1e6 resources
	start := time.Now()
	img, err := c.captureSnapshot(nil)
	require.NoError(b, err)
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000, "lock-ms")
	runtime.KeepAlive(img)
}

// BenchmarkSnapshotLoad1M loads a snapshot of 1,000,000 resources.
func BenchmarkSnapshotLoad1M(b *testing.B) { benchmarkSnapshotLoad(b, 1_000_000) }

// BenchmarkSnapshotLoad200k loads a snapshot of 200,000 resources.
func BenchmarkSnapshotLoad200k(b *testing.B) { benchmarkSnapshotLoad(b, 200_000) }

func benchmarkSnapshotLoad(b *testing.B, n int) {
	path := filepath.Join(b.TempDir(), "catalog.snap")
	c := buildBench(n)
	require.NoError(b, c.SaveSnapshot(path, nil))
	c = nil
	runtime.GC()
	for b.Loop() {
		loaded, _, err := LoadSnapshot(path, Options{Origin: benchOrigin})
		require.NoError(b, err)
		require.Equal(b, n, loaded.Len())
	}
}

func TestSnapshotKeepsTheSetOfEachResource(t *testing.T) {
	c := New(Options{Origin: testOrigin})
	c.Add(&Resource{URI: "http://src.example/a", Length: 1, Lastmod: t1, Set: 1})
	c.Add(&Resource{URI: "http://src.example/b", Length: 1, Lastmod: t1, Set: 515})
	require.NoError(t, c.Seal())
	assert.Empty(t, c.Upsert(&Resource{URI: "http://src.example/a", Length: 1, Lastmod: t1, Set: 2}), "a new set alone is no change")
	for _, raw := range []bool{true, false} {
		rawRecords = raw
		data := snapshotBytes(t, c, nil)
		rawRecords = true
		loaded, _, err := ReadSnapshot(bytes.NewReader(data), Options{Origin: testOrigin})
		require.NoError(t, err)
		for uri, want := range map[string]uint16{"http://src.example/a": 2, "http://src.example/b": 515} {
			id, ok := loaded.ByURI(uri)
			require.True(t, ok)
			r, _ := loaded.Resource(id)
			assert.Equal(t, want, r.Set, "%s (raw records: %v)", uri, raw)
		}
	}
}

// asVersion1 rewrites a snapshot's version to 1, with its checksums.
func asVersion1(t *testing.T, snap []byte) []byte {
	t.Helper()
	out := append([]byte(nil), snap...)
	binary.LittleEndian.PutUint32(out[8:], rawControlVersion)
	binary.LittleEndian.PutUint32(out[20:], crc32.Checksum(out[:20], castagnoli))
	n := len(out) - trailerSize
	binary.LittleEndian.PutUint32(out[n:], crc32.Checksum(out[:n], castagnoli))
	return out
}

func TestSnapshotVersion1ControlNames(t *testing.T) {
	c := New(Options{Origin: testOrigin})
	c.Add(&Resource{URI: "http://src.example/d/a%0Ab", Length: 1})
	c.Add(&Resource{URI: "http://src.example/plain", Length: 2})
	c.Seal()
	var buf bytes.Buffer
	require.NoError(t, c.WriteSnapshot(&buf, []byte("state")))

	// Version 2 reads back; its name is escaped.
	got, state, err := ReadSnapshot(bytes.NewReader(buf.Bytes()), Options{Origin: testOrigin})
	require.NoError(t, err)
	assert.Equal(t, "state", string(state))
	d, _, ok := got.Lookup(RootID, "d")
	require.True(t, ok)
	_, _, ok = got.Lookup(d, "a%0Ab")
	assert.True(t, ok)

	// Version 1 without a control character in any name: its paths are
	// version 2's, so it is read.
	_, _, err = ReadSnapshot(bytes.NewReader(asVersion1(t, buf.Bytes())), Options{Origin: testOrigin})
	require.NoError(t, err)

	// Version 1 whose mapping put a newline in a name (as rsfs did before
	// version 2): refused as corrupt, so the Source is read again.
	cd, _, ok := c.Lookup(RootID, "d")
	require.True(t, ok)
	id, _, ok := c.Lookup(cd, "a%0Ab")
	require.True(t, ok)
	f := c.files.at(id)
	c.arena.bytes(f.nameOff, int(f.nameLen))[1] = '\n' // "a\n0Ab", as an old mapping might have written
	buf.Reset()
	require.NoError(t, c.WriteSnapshot(&buf, nil))
	_, _, err = ReadSnapshot(bytes.NewReader(asVersion1(t, buf.Bytes())), Options{Origin: testOrigin})
	require.ErrorIs(t, err, ErrCorruptSnapshot)
	assert.Contains(t, err.Error(), "control character")
}

// TestWriteSnapshotLeavesNoRecordsImageOnTheHeap: a save copies the
// records (56 bytes a resource) outside the Go heap and gives them back
// when written, so an idle mount does not keep a snapshot's worth of
// garbage after each save (DESIGN §11).
func TestWriteSnapshotLeavesNoRecordsImageOnTheHeap(t *testing.T) {
	const n = 100_000
	c := buildBench(n)
	var buf countingDiscard
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	require.NoError(t, c.WriteSnapshot(&buf, []byte("state")))
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, allocated, uint64(n*recordSize/2), "heap bytes allocated by a save of %d resources", n)
	// The image was whole: the snapshot reads back with every resource.
	require.Greater(t, buf.n, int64(n*recordSize))
}

type countingDiscard struct{ n int64 }

func (w *countingDiscard) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }
