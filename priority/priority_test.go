package priority

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestUrgency(t *testing.T) {
	ctx := context.Background()
	assert.Nil(t, Of(ctx), "an unmarked request is someone's read")

	assert.False(t, Of(Deferrable(ctx, nil))(), "background work with no one to wait for it")

	var waited atomic.Bool
	bg := Deferrable(ctx, waited.Load)
	assert.False(t, Of(bg)())
	waited.Store(true)
	assert.True(t, Of(bg)(), "a reader came to wait for it")
}
