package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"rsfs/fetch"
)

// A failed read is said with the flag that would fix it.
func TestExplainRead(t *testing.T) {
	const uri = "http://localhost:8080/awkward/otherhost.txt"
	cause, fix := explainRead(uri, fmt.Errorf("cache: read %s block 0: %w", uri, fetch.ErrNotAllowed))
	assert.Equal(t, "host not allowed", cause)
	assert.Equal(t, "mount with --allow-host http://localhost:8080 if that host is to be trusted", fix)
	_, fix = explainRead(uri, &fetch.StatusError{URL: uri, Code: 429, Status: "429 Too Many Requests"})
	assert.Equal(t, "the Source kept refusing it as too many requests after every retry: mount with a lower --max-rate (rsfs slowed down already; --max-rate starts lower), or try again", fix)
}
