package sourcetest

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/fetch"
	rs "rsfs/resourcesync"
	"rsfs/source"
	"rsfs/zipindex"
)

// openDump opens package n of set 0 through rsfs's own fetch and zipindex.
func openDump(t *testing.T, src *Source, n int) *zipindex.Package {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	url := src.DumpPackageURL(0, n)
	c := fetch.New(fetch.Options{CredentialOrigin: src.URL(), Retries: -1})
	h, err := c.Head(ctx, url)
	require.NoError(t, err)
	p, err := zipindex.Open(ctx, fetch.NewReaderAt(ctx, c, url, h.Length, h.ETag), h.Length, url, zipindex.Options{})
	require.NoError(t, err)
	return p
}

func TestResourceDumpPackages(t *testing.T) {
	src := start(t, Config{Resources: 250, Dumps: true, PerDump: 100})
	_, body := get(t, src.ResourceDumpURL(0))
	doc, err := rs.Parse(bytes.NewReader(body), src.ResourceDumpURL(0), rs.Options{})
	require.NoError(t, err)
	assert.Equal(t, rs.CapResourceDump, doc.Header.Capability())
	require.Len(t, doc.Entries, 3)
	assert.Equal(t, src.DumpPackageURL(0, 2), doc.Entries[2].Loc)

	_, capList := get(t, src.CapabilityListURL(0))
	assert.Contains(t, string(capList), src.ResourceDumpURL(0))
	assert.Contains(t, string(capList), "resourcelist")

	old := src.Resources()[0]
	require.NoError(t, src.Update(old.URI, []byte("new body after the dump")))
	src.ResetCounters()

	seen := map[uint16]int{}
	total := 0
	for n := range 3 {
		p := openDump(t, src, n)
		m, err := source.ReadManifest(t.Context(), p)
		require.NoError(t, err)
		assert.Equal(t, rs.CapResourceDumpManifest, m.Header.Capability())
		for _, e := range m.Entries {
			member, ok := p.Lookup(e.MD.Path)
			require.True(t, ok, e.MD.Path)
			seen[member.Method]++
			rc, err := p.Reader(t.Context(), member, 0, member.Size)
			require.NoError(t, err)
			var got bytes.Buffer
			_, err = got.ReadFrom(rc)
			require.NoError(t, err)
			rc.Close()
			assert.Equal(t, e.MD.Hashes[0].Value, md5hex(got.Bytes()), e.Loc)
			assert.Equal(t, e.MD.Length, int64(got.Len()))
			if e.Loc == old.URI {
				assert.Equal(t, old.Hashes[0].Value, e.MD.Hashes[0].Value, "the dump is a snapshot")
				assert.NotEqual(t, "new body after the dump", got.String())
			} else {
				want, ok := src.Body(e.Loc)
				require.True(t, ok)
				assert.Equal(t, want, got.Bytes(), e.Loc)
			}
			total++
		}
	}
	assert.Equal(t, 250, total)
	assert.Positive(t, seen[zipindex.MethodStored])
	assert.Positive(t, seen[zipindex.MethodDeflate])
	c := src.Counters()
	assert.Positive(t, c.DumpRanges)
	assert.Zero(t, c.DumpWholeGets)
	assert.Zero(t, c.ContentGets(), "no resource fetched from its URI")
}

func TestDumpOnlyHidesResources(t *testing.T) {
	src := start(t, Config{Resources: 30, Dumps: true, DumpOnly: true, DumpMethod: DumpZstd})
	_, capList := get(t, src.CapabilityListURL(0))
	assert.NotContains(t, string(capList), "resourcelist")
	assert.Contains(t, string(capList), "resourcedump")
	resp, _ := get(t, src.ResourceListURL(0))
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	r := src.Resources()[3]
	resp, _ = get(t, r.URI)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)

	p := openDump(t, src, 0)
	member, ok := p.Lookup(DumpMemberPath(r.URI[len(src.URL())-1:]))
	require.True(t, ok)
	assert.Equal(t, zipindex.MethodZstd, member.Method)
	resp, whole := get(t, src.DumpPackageURL(0, 0))
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.EqualValues(t, len(whole), p.Size)
	assert.EqualValues(t, 1, src.Counters().DumpWholeGets)
}

func TestDumpConfigErrors(t *testing.T) {
	_, err := Start(Config{Resources: 1, DumpOnly: true})
	require.Error(t, err)
	_, err = Start(Config{Resources: 1, Dumps: true, DumpMethod: "lzma"})
	require.Error(t, err)
}
