//go:build !unix

package catalog

// scratch returns n bytes on the heap (scratch_unix.go maps them).
func scratch(n int) ([]byte, func()) { return make([]byte, n), func() {} }
