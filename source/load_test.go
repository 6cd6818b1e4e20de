package source

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
	"rsfs/tests/sourcetest"
)

func load(t *testing.T, url string) (*Source, *catalog.Catalog, *LoadStats, error) {
	t.Helper()
	s, err := discover(t, url)
	require.NoError(t, err)
	cat := catalog.New(catalog.Options{Origin: s.Origin})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var mu sync.Mutex // progress is reported from the loading workers
	var last Progress
	st, err := s.Load(ctx, cat, func(p Progress) { mu.Lock(); last = p; mu.Unlock() })
	if err == nil {
		mu.Lock()
		assert.Equal(t, st.Resources, last.Resources, "the last progress report is final")
		mu.Unlock()
	}
	return s, cat, st, err
}

func TestLoadIndexInParallel(t *testing.T) {
	src := startTestSource(t, sourcetest.Config{Resources: 5000, PerList: 400, Gzip: true})
	_, cat, st, err := load(t, src.URL())
	require.NoError(t, err)
	assert.Equal(t, src.Len(), cat.Len())
	assert.Equal(t, int64(13), st.Lists)
	for _, r := range src.Resources()[:50] {
		id, ok := cat.ByURI(r.URI)
		require.True(t, ok, r.URI)
		a, _ := cat.Attr(id)
		assert.Equal(t, r.Size, a.Size)
		assert.True(t, r.Lastmod.Equal(a.Mtime))
	}
}

func TestLoadAddsWhatHasNoLengthWithNoRequest(t *testing.T) {
	src := startTestSource(t, sourcetest.Config{Resources: 300, OmitLength: true})
	_, cat, st, err := load(t, src.URL())
	require.NoError(t, err)
	assert.Equal(t, int64(300), st.Missing)
	assert.Equal(t, int64(300), st.Resources)
	c := src.Counters()
	assert.Zero(t, c.Heads+c.ContentGets(), "no request for a resource before the mount is ready")
	assert.Equal(t, 300, cat.Len())
	for _, r := range src.Resources() {
		id, ok := cat.ByURI(r.URI)
		require.True(t, ok, r.URI)
		a, _ := cat.Attr(id)
		assert.True(t, a.NoSize, r.URI)
	}
}

func TestLoadKeepsWhatHasNoLength(t *testing.T) {
	base := site(t, map[string]page{
		"/rl.xml": {body: `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="resourcelist" at="2024-01-02T03:04:05Z"/>
  <url><loc>{base}/gone.txt</loc></url>
  <url><loc>{base}/known.txt</loc><rs:md length="7"/></url>
</urlset>`},
	})
	_, cat, st, err := load(t, base+"rl.xml")
	require.NoError(t, err)
	assert.Equal(t, int64(1), st.Missing)
	assert.Equal(t, 2, cat.Len(), "a resource whose length is not published is in the tree")
	id, ok := cat.ByURI(base + "gone.txt")
	require.True(t, ok)
	a, _ := cat.Attr(id)
	assert.True(t, a.NoSize)
	id, ok = cat.ByURI(base + "known.txt")
	require.True(t, ok)
	a, _ = cat.Attr(id)
	assert.False(t, a.NoSize)
	assert.Equal(t, int64(7), a.Size)
	assert.Equal(t, time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), a.Mtime.UTC(), "the list's at stands in for a missing lastmod")
}

func TestLoadFailsOnBrokenList(t *testing.T) {
	base := site(t, map[string]page{
		"/rl.xml": {body: `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="resourcelist"/>
  <url><loc>{base}/a</loc><rs:md length="many"/></url>
</urlset>`},
	})
	_, _, _, err := load(t, base+"rl.xml")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rl.xml:3")
	assert.Contains(t, err.Error(), "length")
}

func TestLoadRejectsWrongCapability(t *testing.T) {
	src := startTestSource(t, sourcetest.Config{Resources: 5})
	s, err := discover(t, src.URL())
	require.NoError(t, err)
	s.Sets()[0].Docs["resourcelist"] = []string{src.ChangeListURL(0)}
	err = func() error {
		_, err := s.Load(context.Background(), catalog.New(catalog.Options{Origin: s.Origin}), nil)
		return err
	}()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `capability is "changelist"`)
}

func TestLoadListsOnAnotherHost(t *testing.T) {
	cdn := site(t, map[string]page{"/rl.xml": {body: resList}})
	base := site(t, map[string]page{"/caps.xml": {body: strings.ReplaceAll(capList, "{base}/rl.xml", cdn+"rl.xml")}})
	s, cat, _, err := load(t, base+"caps.xml")
	require.NoError(t, err, "a list the Capability List places on another host is fetched")
	assert.Equal(t, 1, cat.Len())
	assert.True(t, s.opts.Client.Allowed(cdn+"rl.xml"))
	assert.False(t, s.opts.Client.Allowed("http://elsewhere.example/x"))
}

func TestLoadNamesTheListThatFillsTheCatalog(t *testing.T) {
	base := site(t, map[string]page{
		"/rl.xml": {body: `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="resourcelist"/>
  <url><loc>{base}/a</loc><rs:md length="1"/></url>
  <url><loc>{base}/b</loc><rs:md length="2"/></url>
  <url><loc>{base}/c</loc><rs:md length="3"/></url>
</urlset>`},
	})
	s, err := discover(t, base+"rl.xml")
	require.NoError(t, err)
	cat := catalog.New(catalog.Options{Origin: s.Origin, Limits: catalog.Limits{Records: 3}})
	_, err = s.Load(context.Background(), cat, nil)
	require.ErrorIs(t, err, catalog.ErrFull)
	assert.Contains(t, err.Error(), "read resource list "+base+"rl.xml")
	assert.Contains(t, err.Error(), base+"c", "the resource refused")
	assert.Contains(t, err.Error(), "2 resources")
}

// A Source of Change Lists alone loads an empty tree (the follower fills
// it) and says it has no baseline, where it was refused.
func TestLoadChangeListsAlone(t *testing.T) {
	base := site(t, map[string]page{
		"/caps.xml": {body: `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="capabilitylist"/>
  <url><loc>{base}/cl.xml</loc><rs:md capability="changelist"/></url>
</urlset>`},
		"/cl.xml": {body: `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="{base}/caps.xml"/>
  <rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>
  <url><loc>{base}/a</loc><lastmod>2024-01-02T00:00:00Z</lastmod><rs:md change="created" length="1"/></url>
</urlset>`},
	})
	s, cat, st, err := load(t, base+"caps.xml")
	require.NoError(t, err)
	assert.Zero(t, st.Resources)
	assert.Zero(t, cat.Len())
	require.Len(t, s.Sets(), 1)
	assert.True(t, s.NoBaseline(s.Sets()[0]))
}

func TestLoadRefusesASourceOfNothing(t *testing.T) {
	base := site(t, map[string]page{
		"/caps.xml": {body: `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="capabilitylist"/>
</urlset>`},
	})
	s, err := discover(t, base+"caps.xml")
	if err != nil {
		assert.ErrorIs(t, err, ErrNotFound)
		return
	}
	_, err = s.Load(context.Background(), catalog.New(catalog.Options{Origin: s.Origin}), nil)
	assert.ErrorIs(t, err, ErrNotFound)
}
