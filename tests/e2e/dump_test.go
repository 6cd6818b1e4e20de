package e2e

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

func TestDumpOnlySource(t *testing.T) {
	t.Parallel()
	for _, method := range []string{sourcetest.DumpMixed, sourcetest.DumpZstd} {
		t.Run(method, func(t *testing.T) {
			src := startSource(t, sourcetest.Config{Resources: 300, Dumps: true, DumpOnly: true, PerDump: 100, DumpMethod: method})
			m := mount(t, src.URL())
			atMount := src.Counters()
			packages := int64(src.DumpPackages(0))
			require.Equal(t, int64(3), packages)
			// Per package: the directory (one tail read), then the manifest's
			// local header and bytes.
			assert.LessOrEqual(t, atMount.DumpRanges, 5*packages, "requests to open the packages")
			t.Logf("%d range requests to open %d packages and read their manifests", atMount.DumpRanges, packages)
			checkTree(t, src, m)
			c := src.Counters()
			assert.Zero(t, c.DumpWholeGets, "no package fetched whole")
			assert.Zero(t, c.ContentGets(), "the resources' URIs (404 here) were not asked")
		})
	}
}

func TestResourceUpdatedAfterDumpReadsItsURI(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 40, Dumps: true, PerDump: 20})
	res := src.Resources()
	require.NoError(t, src.Update(res[0].URI, []byte("newer than the dump\n")))
	src.FailPrimary(res[1].URI, 500) // its dump copy is the same version
	// Updated after the dump and its URI fails: the dump's copy is stale.
	require.NoError(t, src.Update(res[2].URI, []byte("also newer\n")))
	src.FailPrimary(res[2].URI, 500)
	m := mount(t, src.URL(), "--retries", "1")
	files := walkFiles(t, m.dir)

	got, err := os.ReadFile(files[res[0].URI])
	require.NoError(t, err)
	// Only its URI has these bytes: the dump holds the older version and
	// there is no mirror.
	assert.Equal(t, "newer than the dump\n", string(got), "served by its URI, not the stale member")

	got, err = os.ReadFile(files[res[1].URI])
	require.NoError(t, err)
	want, _ := src.Body(res[1].URI)
	assert.Equal(t, want, got, "served from the dump when the URI fails")
	assert.Positive(t, src.Counters().DumpRanges)

	_, err = os.ReadFile(files[res[2].URI])
	assert.ErrorIs(t, err, syscall.EIO, "never the stale member, even when the URI fails")
	src.FailPrimary(res[2].URI, 0)
	src.FailPrimary(res[1].URI, 0)
	checkTree(t, src, m)
}
