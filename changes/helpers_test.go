package changes

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"rsfs/catalog"
	"rsfs/fetch"
	"rsfs/source"
)

func testOptions() source.Options {
	return source.Options{Client: fetch.New(fetch.Options{Retries: -1, Timeout: 5 * time.Second})}
}

// discoverSource discovers the ResourceSync Source at url.
func discoverSource(ctx context.Context, url string, opts source.Options) (*source.Source, error) {
	return source.Discover(ctx, url, opts)
}

func discover(t *testing.T, url string) (*source.Source, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return discoverSource(ctx, url, testOptions())
}

// load discovers the Source at url and loads its catalog, as a mount does
// before it follows.
func load(t *testing.T, url string) (*source.Source, *catalog.Catalog, *source.LoadStats, error) {
	t.Helper()
	s, err := discover(t, url)
	require.NoError(t, err)
	cat := catalog.New(catalog.Options{Origin: s.Origin})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := s.Load(ctx, cat, nil)
	return s, cat, st, err
}
