//go:build unix

package catalog

import "syscall"

// scratch returns n bytes outside the Go heap and the function that gives
// them back to the OS. A snapshot's records image (56 bytes a resource) is
// written once and dropped: on the heap it stayed resident as garbage
// after every save, since the runtime returns freed heap only slowly (at
// 200,000 resources, 11 MB of an idle mount's 55 MB). Where the mapping
// fails, the heap serves.
func scratch(n int) ([]byte, func()) {
	if n <= 0 {
		return nil, func() {}
	}
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return make([]byte, n), func() {}
	}
	return b, func() { _ = syscall.Munmap(b) }
}
