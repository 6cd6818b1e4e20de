package mountutil

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

// readyFDEnv names the environment variable that tells a background child
// which file descriptor to report readiness on.
const readyFDEnv = "RSFS_READY_FD"

// StartBackground runs the same program again with args, detached in a
// session of its own, and waits until it reports that the mount serves (or
// why it could not). The child shares this process's stdout and stderr
// until it moves its output to its log file (logfile.Output.Detach), and keeps
// copies of them until it serves, for what it says on the terminal. SIGINT, SIGTERM or SIGHUP
// while it waits stops the child: its loading ends and nothing is mounted.
func StartBackground(args []string, timeout time.Duration) error {
	// A signal while the child loads (^C at the terminal reaches only this
	// process: the child has a session of its own) is passed on to it.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("start in background: %w", err)
	}
	defer r.Close()
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("start in background: %w", err)
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), readyFDEnv+"=3")
	cmd.ExtraFiles = []*os.File{w}
	cmd.Stdin = nil
	cmd.Stdout = os.Stdout // the line that says it mounted
	cmd.Stderr = os.Stderr // progress and errors while loading
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return fmt.Errorf("start in background: %w", err)
	}
	w.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case s := <-line:
		return readyLine(s, exited)
	case sig := <-sigs:
		return stopChild(cmd.Process, sig, line, exited)
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		return fmt.Errorf("mount not ready after %s", timeout)
	}
}

// readyLine is the outcome the child reported.
func readyLine(s string, exited <-chan error) error {
	if s == "ok" {
		return nil
	}
	if s == "" {
		if err := <-exited; err != nil {
			return fmt.Errorf("mount process exited: %w", err)
		}
		return errors.New("mount process exited before the mount was ready")
	}
	return errors.New(strings.TrimPrefix(s, "error: "))
}

// stopGrace bounds how long an interrupted parent waits for the child to
// stop loading (or, if it had just mounted, to unmount) and exit.
const stopGrace = 30 * time.Second

// stopChild passes a signal the waiting parent received on to the child
// as SIGTERM, so that its loading stops and nothing is mounted, and waits
// for it to exit.
func stopChild(p *os.Process, sig os.Signal, line <-chan string, exited <-chan error) error {
	_ = p.Signal(syscall.SIGTERM)
	reason := fmt.Sprintf("interrupted (%s): loading stopped, nothing mounted", sig)
	select {
	case s := <-line:
		if s == "ok" {
			// It had mounted: SIGTERM unmounts it.
			reason = fmt.Sprintf("interrupted (%s) as the mount was made: unmounted", sig)
		}
	case <-time.After(stopGrace):
	}
	select {
	case <-exited:
	case <-time.After(stopGrace):
		_ = p.Kill()
		return fmt.Errorf("interrupted (%s): the mount process did not stop in %s; killed", sig, stopGrace)
	}
	return errors.New(reason)
}

// WatchParent, in a background child, stops the loading when the parent
// waiting for it goes away without passing a signal on (killed, or its
// terminal hung up on it): it sends this process SIGTERM, which
// CatchSignals holds. The returned func ends the watch; call it before
// ReportReady says the mount serves, after which the parent exits. Outside
// a background child it does nothing.
func WatchParent() (stop func()) {
	if !InBackground() {
		return func() {}
	}
	ppid := os.Getppid()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if os.Getppid() != ppid {
				_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
				return
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); <-finished }) }
}

// InBackground reports whether this process is a background child started
// by StartBackground.
func InBackground() bool { return os.Getenv(readyFDEnv) != "" }

// ReportReady tells the waiting parent the outcome (nil: mounted). It does
// nothing in a process that was not started by StartBackground.
func ReportReady(err error) {
	if !InBackground() {
		return
	}
	f := os.NewFile(3, "ready")
	if f == nil {
		return
	}
	defer f.Close()
	msg := "ok\n"
	if err != nil {
		msg = "error: " + strings.ReplaceAll(err.Error(), "\n", " ") + "\n"
	}
	_, _ = io.WriteString(f, msg)
	os.Unsetenv(readyFDEnv)
}

// CaptureStderr runs fn with the process's stderr (fd 2) sent to a pipe,
// and returns what was written there meanwhile: what fusermount3, which
// go-fuse runs with this process's stderr, says when it fails. Loggers
// must not write to fd 2 meanwhile (rsfs's write to their own descriptor).
func CaptureStderr(fn func() error) (string, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return "", fn()
	}
	saved, err := syscall.Dup(2)
	if err != nil {
		r.Close()
		w.Close()
		return "", fn()
	}
	got := make(chan string, 1)
	go func() {
		data, _ := io.ReadAll(io.LimitReader(r, 64<<10))
		_, _ = io.Copy(io.Discard, r)
		r.Close()
		got <- string(data)
	}()
	_ = syscall.Dup2(int(w.Fd()), 2)
	w.Close()
	ferr := fn()
	_ = syscall.Dup2(saved, 2) // the pipe's last writer is closed: the reader ends
	syscall.Close(saved)
	return strings.TrimSpace(<-got), ferr
}
