package fetch

import (
	"context"
	"sync"
)

// HeadParallel is how many HEAD requests learn sizes at once, wherever
// rsfs learns many: loading a Resource List without lengths, following its
// changes, harvesting an Atom-PMH feed.
const HeadParallel = 16

// HeadEach learns what Head learns about many resources, parallel at a
// time: each is called, from several goroutines, with an item and the
// answer for urlOf(item). When each returns an error the rest are not
// asked and HeadEach returns the first such error; it returns ctx's error
// when ctx ends first. Loading a Resource List without lengths and an
// Atom-PMH feed both learn their files' sizes this way.
func HeadEach[T any](ctx context.Context, c *Client, items []T, parallel int, urlOf func(T) string, each func(T, *Meta, error) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	work := make(chan T)
	var wg sync.WaitGroup
	for range max(parallel, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				meta, err := c.Head(ctx, urlOf(it))
				if ctx.Err() != nil {
					continue
				}
				if err := each(it, meta, err); err != nil {
					cancel(err)
				}
			}
		}()
	}
feed:
	for _, it := range items {
		select {
		case work <- it:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}
