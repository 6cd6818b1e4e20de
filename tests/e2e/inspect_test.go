package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/sourcetest"
)

// The inspect tests need no FUSE: they run wherever the binary builds.

// inspectJSON runs `rsfs inspect --json ARGS...` and decodes its output as any
// JSON, not into rsfs's own types, so the keys docs/usage.md documents are
// what is checked.
func inspectJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out, stderr, err := run(t, time.Minute, rsfsBin, append([]string{"inspect", "--json"}, args...)...)
	require.NoError(t, err, stderr)
	var rep map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	return rep
}

// object returns v[key] as a JSON object.
func object(t *testing.T, v map[string]any, key string) map[string]any {
	t.Helper()
	o, ok := v[key].(map[string]any)
	require.True(t, ok, "%q is not an object: %v", key, v[key])
	return o
}

// array returns v[key] as a JSON array of objects.
func array(t *testing.T, v map[string]any, key string) []map[string]any {
	t.Helper()
	a, ok := v[key].([]any)
	require.True(t, ok, "%q is not an array: %v", key, v[key])
	out := make([]map[string]any, len(a))
	for i, e := range a {
		out[i], ok = e.(map[string]any)
		require.True(t, ok, "%q[%d] is not an object: %v", key, i, e)
	}
	return out
}

// number returns v[key] as a JSON number.
func number(t *testing.T, v map[string]any, key string) float64 {
	t.Helper()
	n, ok := v[key].(float64)
	require.True(t, ok, "%q is not a number: %v", key, v[key])
	return n
}

func TestInspectJSON(t *testing.T) {
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 1200, PerList: 500, Hub: "http://127.0.0.1:1/hub"})
	res := src.Resources()
	require.NoError(t, src.Update(res[0].URI, []byte("new bytes")))
	require.NoError(t, src.Delete(res[1].URI))
	rep := inspectJSON(t, src.URL())

	assert.Equal(t, strings.TrimSuffix(src.URL(), "/"), rep["origin"])
	assert.Equal(t, src.WellKnownURL(), rep["entry"])
	sets := array(t, rep, "sets")
	require.Len(t, sets, 1)
	set := sets[0]
	assert.Equal(t, src.CapabilityListURL(0), set["capability_list"])
	assert.Equal(t, float64(src.Len()), number(t, set, "resources"))
	var total int64
	for _, r := range src.Resources() {
		total += r.Size
	}
	assert.Equal(t, float64(total), number(t, set, "bytes"))
	assert.Equal(t, float64(0), number(t, set, "resources_without_length"))
	assert.Equal(t, float64(0), number(t, set, "dump_packages"))
	assert.Equal(t, float64(0), number(t, set, "dump_bytes"))
	assert.Equal(t, float64(2), number(t, set, "changes"))
	newest, ok := set["newest_change"].(string)
	require.True(t, ok, "newest_change: %v", set["newest_change"])
	at, err := time.Parse(time.RFC3339, newest)
	require.NoError(t, err)
	deleted, _ := src.Lookup(res[1].URI)
	assert.Equal(t, deleted.Lastmod.Unix(), at.Unix(), "the deletion is the newest change")
	assert.NotContains(t, set, "packages", "absent without dumps")
	assert.Empty(t, rep["failed"], "nothing failed")
	listedAt, ok := set["listed_at"].(string)
	require.True(t, ok, "listed_at: %v", set["listed_at"])
	_, err = time.Parse(time.RFC3339, listedAt)
	assert.NoError(t, err)
	follow := object(t, set, "follow")
	assert.Equal(t, []any{src.ChangeListURL(0)}, follow["polled"], "each poll reads the Change List")

	docs := map[string]map[string]any{}
	for _, d := range array(t, set, "documents") {
		c, _ := d["capability"].(string)
		docs[c] = d
		assert.NotContains(t, d, "error", "%s was read", d["url"])
	}
	rl := docs["resourcelist"]
	require.NotNil(t, rl, "documents: %v", docs)
	assert.Equal(t, src.ResourceListURL(0), rl["url"])
	assert.Equal(t, true, rl["index"])
	assert.Equal(t, float64(3), number(t, rl, "documents"), "1200 resources, 500 a list")
	assert.Equal(t, float64(src.Len()), number(t, rl, "entries"), "one deleted")
	cl := docs["changelist"]
	require.NotNil(t, cl, "documents: %v", docs)
	assert.Equal(t, src.ChangeListURL(0), cl["url"])
	assert.Equal(t, false, cl["index"])
	assert.Equal(t, float64(1), number(t, cl, "documents"))
	assert.Equal(t, float64(2), number(t, cl, "entries"))

	channels := array(t, set, "channels")
	require.Len(t, channels, 1)
	assert.Equal(t, map[string]any{
		"capability": "change-notification",
		"topic":      src.NotificationTopic(0),
		"hub":        "http://127.0.0.1:1/hub",
	}, channels[0])
}

func TestInspectText(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	src := startSource(t, sourcetest.Config{Resources: 120, Dumps: true, PerDump: 50})
	rep := inspectJSON(t, src.URL())
	set := array(t, rep, "sets")[0]
	assert.Equal(t, float64(3), number(t, set, "dump_packages"))
	pkgs := array(t, set, "packages")
	require.Len(t, pkgs, 3)
	var total, size float64
	for _, p := range pkgs {
		assert.NotContains(t, p, "error", "absent when the package reads")
		assert.Contains(t, p["url"], "/dumps/part")
		assert.Positive(t, number(t, p, "size"))
		size += number(t, p, "size")
		members, entries, matched := number(t, p, "members"), number(t, p, "manifest_entries"), number(t, p, "matched")
		assert.Equal(t, entries, matched)
		assert.Equal(t, members, entries+1, "every member but manifest.xml is in the manifest")
		methods := object(t, p, "methods")
		var byMethod float64
		for name, n := range methods {
			assert.Contains(t, []string{"stored", "deflate"}, name)
			byMethod += n.(float64)
		}
		assert.Equal(t, members, byMethod)
		total += matched
	}
	assert.Equal(t, float64(120), total)
	assert.Equal(t, size, number(t, set, "dump_bytes"), "the Resource Dump's lengths are the packages' sizes")
	text, _, err := run(t, time.Minute, rsfsBin, "inspect", src.URL())
	require.NoError(t, err)
	assert.Contains(t, text, "manifest 50 entries, 50 matched")
}
