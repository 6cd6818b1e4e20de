package mountutil

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// readyFDEnv names the environment variable that tells a background child
// which file descriptor to report readiness on.
const readyFDEnv = "RSFS_READY_FD"

// StartBackground runs the same program again with args, detached in a
// session of its own, and waits until it reports that the mount serves (or
// why it could not). The child shares this process's stderr until it moves
// its output to its log file (RedirectOutput).
func StartBackground(args []string, timeout time.Duration) error {
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
	cmd.Stdout = nil
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
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		return fmt.Errorf("mount not ready after %s", timeout)
	}
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

// RedirectOutput points the process's stdout and stderr at the file at
// path (created or appended), so a background mount's logs and any panic
// land there, and detaches stdin.
func RedirectOutput(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open log %s: %w", path, err)
	}
	defer f.Close()
	for _, fd := range []int{1, 2} {
		if err := syscall.Dup2(int(f.Fd()), fd); err != nil {
			return fmt.Errorf("redirect output to %s: %w", path, err)
		}
	}
	if null, err := os.Open(os.DevNull); err == nil {
		_ = syscall.Dup2(int(null.Fd()), 0)
		null.Close()
	}
	return nil
}
