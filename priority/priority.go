// Package priority says, through a request's context, whether someone is
// waiting for it. A read a user is blocked on is urgent; a prefetch or a
// warming fill is deferrable until someone comes to wait for it too. The
// HTTP client (package fetch) serves urgent requests first when an origin
// is paced; the cache marks its background fills. It knows nothing else.
package priority

import "context"

type key struct{}

// Deferrable marks ctx's requests as background work that gives way to
// urgent requests. waited, if not nil, is asked each time the request
// could go: it turns the request urgent once it returns true (a reader
// came to wait for the block a prefetch is filling).
func Deferrable(ctx context.Context, waited func() bool) context.Context {
	if waited == nil {
		waited = never
	}
	return context.WithValue(ctx, key{}, waited)
}

func never() bool { return false }

// Of returns the function that tells whether ctx's requests are urgent
// now (someone waits for them), or nil when they always are: any context
// not marked Deferrable.
func Of(ctx context.Context) func() bool {
	waited, ok := ctx.Value(key{}).(func() bool)
	if !ok {
		return nil
	}
	return waited
}
