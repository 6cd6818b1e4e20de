package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"rsfs/mountutil"
	"rsfs/statedir"
)

// fuseDevice is the device a FUSE mount opens (fusermount3 opens it as
// the user who runs it).
const fuseDevice = "/dev/fuse"

// precheck confirms, before anything is downloaded, that the mount can be
// made and kept: FUSE is usable by this user, the mount point is one this
// user may mount on, and the log and state paths can be written. Each
// failure names the fix. (mountutil.Prepare has checked that DIR exists,
// is an empty directory and is not already mounted.)
func precheck(mf *mountFlags, dir string) error {
	if err := checkFUSE(); err != nil {
		return err
	}
	if err := checkMountPoint(dir); err != nil {
		return err
	}
	if err := checkLogFile(mf, dir); err != nil {
		return err
	}
	return checkStateBase(mf)
}

// checkFUSE opens /dev/fuse as this user, as the mount (root) or
// fusermount3 (anyone else) will, and finds fusermount3 for a user who is
// not root.
func checkFUSE() error {
	f, err := os.OpenFile(fuseDevice, os.O_RDWR, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("FUSE: no %s: load the fuse module (modprobe fuse), or in a container pass the device (docker run --device /dev/fuse)", fuseDevice)
	case errors.Is(err, fs.ErrPermission):
		mode := ""
		if st, serr := os.Stat(fuseDevice); serr == nil {
			mode = fmt.Sprintf(" (mode %04o)", st.Mode().Perm())
		}
		return fmt.Errorf("FUSE: cannot open %s%s: permission denied: an administrator can make it 0666, as distributions ship it (chmod 0666 %s), or mount as root", fuseDevice, mode, fuseDevice)
	case err != nil:
		return fmt.Errorf("FUSE: %w", err)
	}
	f.Close()
	if os.Geteuid() == 0 {
		return nil
	}
	bin, err := exec.LookPath("fusermount3")
	if err != nil {
		if bin, err = exec.LookPath("fusermount"); err != nil {
			return errors.New("FUSE: fusermount3 not found, which mounts for a user who is not root: install fuse3 (Debian, Ubuntu: apt install fuse3)")
		}
	}
	st, err := os.Stat(bin)
	if err != nil {
		return fmt.Errorf("FUSE: %w", err)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && (st.Mode()&os.ModeSetuid == 0 || sys.Uid != 0) {
		return fmt.Errorf("FUSE: %s is not setuid root (mode %v), so it cannot mount for a user who is not root: an administrator can restore it (chmod u+s %s, owned by root), or mount as root", bin, st.Mode(), bin)
	}
	return nil
}

// checkMountPoint refuses a mount point fusermount3 would: a user who is
// not root mounts only on a directory they may write, and that they own if
// it is sticky.
func checkMountPoint(dir string) error {
	if os.Geteuid() == 0 {
		return nil
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("mountpoint %s: %w", dir, err)
	}
	uid := -1
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		uid = int(sys.Uid)
	}
	const fix = "use a directory of your own (mkdir ~/mnt), or have this one chowned to you"
	if st.Mode()&os.ModeSticky != 0 && uid != os.Getuid() {
		return fmt.Errorf("mountpoint %s: sticky and owned by uid %d, not you: %s", dir, uid, fix)
	}
	if err := syscall.Access(dir, 2 /* W_OK */); err != nil {
		return fmt.Errorf("mountpoint %s: not writable by you (owner uid %d, mode %04o): a user mounts only on a directory they can write; %s", dir, uid, st.Mode().Perm(), fix)
	}
	return nil
}

// checkLogFile creates the log file a mount will write, or its directory:
// --log-file, or a background mount's default one.
func checkLogFile(mf *mountFlags, dir string) error {
	path := mf.logFile
	if path == "" {
		if mf.foreground || mountutil.InBackground() {
			return nil // stderr, or the parent checked it
		}
		var err error
		if path, err = defaultLogFile(dir); err != nil {
			return fmt.Errorf("%w: set XDG_CACHE_HOME (or HOME) to a directory you can write, or pass --log-file", err)
		}
	}
	hint := "pass a --log-file you can write"
	if mf.logFile == "" {
		hint = "set XDG_CACHE_HOME to a directory you can write, or pass --log-file"
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("log file %s: %w: %s", path, err, hint)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("log file %s: %w: %s", path, err, hint)
	}
	return f.Close()
}

// checkStateBase confirms that the state directories' base can be
// written, unless remembering is off; it creates the base, not a state
// directory (a mount that fails leaves none).
func checkStateBase(mf *mountFlags) error {
	base := statedir.Base(mf.cacheDir)
	if base == statedir.None {
		return nil
	}
	hint := "pass a --cache-dir you can write, or --cache-dir none to remember nothing"
	if base == "" {
		return fmt.Errorf("state directory: no cache directory ($XDG_CACHE_HOME and $HOME are unset): %s", hint)
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return fmt.Errorf("state directory: %w: %s", err, hint)
	}
	f, err := os.CreateTemp(base, ".write-test-*")
	if err != nil {
		return fmt.Errorf("state directory: %w: %s", err, hint)
	}
	f.Close()
	return os.Remove(f.Name())
}
