package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// peerClient is one way to mount the peer Source.
type peerClient struct {
	name    string
	exe     string // the mount process's executable, to find its pid
	mountFn func(dir, cacheDir string) error
	umount  []string // the command that unmounts, DIR appended
}

func rsfsClient(name, bin, url, logFile string, flags []string) peerClient {
	return peerClient{name: name, exe: bin, umount: []string{"umount"},
		mountFn: func(dir, cacheDir string) error {
			args := append([]string{"mount", url, dir, "--log-file", logFile, "--cache-dir", cacheDir}, flags...)
			return run(bin, args...)
		}}
}

func rcloneClient(name, url, tmp string, extra ...string) peerClient {
	conf := filepath.Join(tmp, "rclone.conf")
	logFile := filepath.Join(tmp, "rclone-"+strings.ReplaceAll(name, " ", "-")+".log")
	return peerClient{name: name, exe: "rclone", umount: []string{"fusermount3", "-u"},
		mountFn: func(dir, cacheDir string) error {
			if err := os.WriteFile(conf, nil, 0o600); err != nil {
				return err
			}
			args := append([]string{"mount", ":http:", dir, "--http-url", url, "--read-only", "--daemon",
				"--config", conf, "--log-file", logFile, "--cache-dir", cacheDir}, extra...)
			if err := run("rclone", args...); err != nil {
				return err
			}
			return waitMounted(dir, 30*time.Second)
		}}
}

// mounted is a live mount of a client.
type mounted struct {
	c        peerClient
	dir      string
	cacheDir string
	pid      int
	ready    time.Duration
}

// mountClient mounts c on a fresh directory with a fresh cache directory,
// so no run inherits blocks or snapshots from the one before.
func mountClient(c peerClient, tmp string) (*mounted, error) {
	dir, err := os.MkdirTemp(tmp, "mnt")
	if err != nil {
		return nil, err
	}
	m := &mounted{c: c, dir: dir, cacheDir: dir + ".cache"}
	start := time.Now()
	if err := c.mountFn(dir, m.cacheDir); err != nil {
		return nil, fmt.Errorf("mount %s: %w", c.name, err)
	}
	m.ready = time.Since(start)
	m.pid, err = pidServing(dir, filepath.Base(c.exe))
	if err != nil {
		m.unmount()
		return nil, fmt.Errorf("mount %s: %w", c.name, err)
	}
	return m, nil
}

// unmount unmounts, waits for the mount's process to end and removes its
// cache; a mount that will not go is detached.
func (m *mounted) unmount() error {
	var err error
	for try := 0; try < 50; try++ {
		args := append(append([]string{}, m.c.umount[1:]...), m.dir)
		if err = run(m.c.umount[0], args...); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		_ = syscall.Unmount(m.dir, syscall.MNT_DETACH)
	}
	if m.pid > 0 {
		waitExit(m.pid)
	}
	os.RemoveAll(m.cacheDir)
	os.Remove(m.dir)
	return err
}

// procStatus returns VmRSS and VmHWM of pid, in MiB.
func procStatus(pid int) (rss, hwm int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		var kb int64
		fmt.Sscan(f[1], &kb)
		switch f[0] {
		case "VmRSS:":
			rss = kb / 1024
		case "VmHWM:":
			hwm = kb / 1024
		}
	}
	return rss, hwm, nil
}

// pidServing finds the live process whose command line names dir as an
// argument and whose executable is exe (rsfs and rclone both fork the
// process that serves).
func pidServing(dir, exe string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		args := strings.Split(string(bytes.TrimRight(cmdline, "\x00")), "\x00")
		if len(args) > 1 && filepath.Base(args[0]) == exe && containsArg(args, dir) && !zombie(pid) {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no %s process serves %s", exe, dir)
}

func containsArg(args []string, s string) bool {
	for _, a := range args {
		if a == s {
			return true
		}
	}
	return false
}

func zombie(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	return len(f) == 0 || f[0] == "Z"
}

// waitMounted waits for dir to be a mount point in /proc/self/mountinfo.
func waitMounted(dir string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		data, err := os.ReadFile("/proc/self/mountinfo")
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) > 4 && f[4] == dir {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not mounted after %s", dir, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// run runs a command; its error carries the command's output. The output
// goes through a file, not a pipe: a daemon that forks (rclone --daemon)
// keeps a pipe open and would hold Wait until it exits.
func run(name string, args ...string) error {
	out, err := os.CreateTemp("", "bench-out")
	if err != nil {
		return err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		text, _ := os.ReadFile(out.Name())
		if text = bytes.TrimSpace(text); len(text) == 0 {
			return fmt.Errorf("%s %s: %w", name, args[0], err)
		}
		return fmt.Errorf("%s %s: %w: %s", name, args[0], err, text)
	}
	return nil
}
