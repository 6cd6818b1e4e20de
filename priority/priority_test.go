package priority

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestUrgency(t *testing.T) {
	ctx := context.Background()
	assert.True(t, Urgent(ctx), "an unmarked request is someone's read")
	assert.Nil(t, Of(ctx))

	assert.False(t, Urgent(Deferrable(ctx, nil)), "background work with no one to wait for it")

	var waited atomic.Bool
	bg := Deferrable(ctx, waited.Load)
	assert.False(t, Urgent(bg))
	waited.Store(true)
	assert.True(t, Urgent(bg), "a reader came to wait for it")
	assert.NotNil(t, Of(bg))
}
