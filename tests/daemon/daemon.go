// Package daemon is what the tests that start a server of Debian's (squid,
// nginx, Varnish) share: a free port, and the wait until it listens.
package daemon

import (
	"fmt"
	"net"
	"time"
)

// FreePort returns a free port of 127.0.0.1.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// ExitedError: the server exited before it listened.
type ExitedError struct{ Err error }

func (e *ExitedError) Error() string { return fmt.Sprintf("exited (%v)", e.Err) }

// WaitListening waits until 127.0.0.1:port accepts a connection (nil), the
// server exits (exited yields: an *ExitedError), or timeout passes (an
// error; the caller kills it). exited is the server's Wait, sent once.
func WaitListening(port int, exited <-chan error, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case err := <-exited:
			return &ExitedError{err}
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("did not listen within %s", timeout)
		}
	}
}
