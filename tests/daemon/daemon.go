// Package daemon is what the tests that start a server of Debian's (squid,
// nginx, Varnish) share: a free port, starting it until it listens, and
// stopping it.
package daemon

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
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

// Start starts cmd with its output in dir/stderr.log and waits until it
// listens on 127.0.0.1:port. It returns a channel closed once the process
// has exited. A server that exits first is an *ExitedError followed by
// stderr.log and the other logs named (files in dir); one that does not
// listen within timeout is killed.
func Start(cmd *exec.Cmd, dir string, port int, timeout time.Duration, logs ...string) (<-chan struct{}, error) {
	out, err := os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	done := make(chan struct{})
	go func() { exited <- cmd.Wait(); close(done) }()
	err = WaitListening(port, exited, timeout)
	var gone *ExitedError
	switch {
	case err == nil:
		go func() { <-exited }()
		return done, nil
	case errors.As(err, &gone):
		said := ""
		for _, name := range append([]string{"stderr.log"}, logs...) {
			b, _ := os.ReadFile(filepath.Join(dir, name))
			said += string(b)
		}
		return nil, fmt.Errorf("%w: %s", err, said)
	default:
		_ = cmd.Process.Kill()
		<-done
		return nil, err
	}
}

// Stop sends the process Start started sig, and kills it if it has not
// exited (done) within grace; it waits at most 5 s more.
func Stop(p *os.Process, done <-chan struct{}, sig os.Signal, grace time.Duration) {
	_ = p.Signal(sig)
	select {
	case <-done:
		return
	case <-time.After(grace):
	}
	_ = p.Kill()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
}
