package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/source"
	"rsfs/tests/sourcetest"
)

func TestInspectJSON(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 1200, PerList: 500, OmitLength: false})
	res := src.Resources()
	require.NoError(t, src.Update(res[0].URI, []byte("new bytes")))
	require.NoError(t, src.Delete(res[1].URI))
	out, stderr, err := run(t, time.Minute, rsfsBin, "inspect", "--json", src.URL())
	require.NoError(t, err, stderr)
	var rep source.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Sets, 1)
	set := rep.Sets[0]
	assert.Equal(t, int64(src.Len()), set.Resources)
	var total int64
	for _, r := range src.Resources() {
		total += r.Size
	}
	assert.Equal(t, total, set.Bytes)
	assert.Equal(t, int64(2), set.Changes)
	require.NotNil(t, set.NewestChange)
	var rl *source.DocReport
	for i := range set.Documents {
		if set.Documents[i].Capability == "resourcelist" {
			rl = &set.Documents[i]
		}
	}
	require.NotNil(t, rl)
	assert.True(t, rl.Index)
	assert.Equal(t, 3, rl.Documents)
}

func TestInspectText(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 50, Layout: sourcetest.Layout10})
	out, stderr, err := run(t, time.Minute, rsfsBin, "inspect", src.URL())
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "resources:     50")
	assert.Contains(t, out, "resourcelist")
	_, stderr, err = run(t, time.Minute, rsfsBin, "inspect", "http://127.0.0.1:1/", "--retries", "0")
	assert.Error(t, err)
	assert.Equal(t, 1, len(strings.Split(strings.TrimSpace(stderr), "\n")))
}

func TestInspectDumpPackages(t *testing.T) {
	src := startSource(t, sourcetest.Config{Resources: 120, Dumps: true, PerDump: 50})
	out, stderr, err := run(t, time.Minute, rsfsBin, "inspect", "--json", src.URL())
	require.NoError(t, err, stderr)
	var rep source.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	pkgs := rep.Sets[0].Packages
	require.Len(t, pkgs, 3)
	total := 0
	for _, p := range pkgs {
		assert.Empty(t, p.Error)
		assert.Positive(t, p.Size)
		assert.Equal(t, p.ManifestEntries, p.Matched)
		assert.Equal(t, p.Members, p.ManifestEntries+1, "every member but manifest.xml is in the manifest")
		assert.Equal(t, p.Members, p.Methods["stored"]+p.Methods["deflate"])
		total += p.Matched
	}
	assert.Equal(t, 120, total)
	text, _, err := run(t, time.Minute, rsfsBin, "inspect", src.URL())
	require.NoError(t, err)
	assert.Contains(t, text, "manifest 50 entries, 50 matched")
}
