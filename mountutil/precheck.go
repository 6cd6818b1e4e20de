package mountutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// fuseDevice is the device a FUSE mount opens (fusermount3 opens it as
// the user who runs it).
const fuseDevice = "/dev/fuse"

// Precheck confirms, before anything is downloaded, that a mount on dir
// can be made by this user: FUSE is usable, dir is a mount point this user
// may mount on, and fusermount3 will take the mount's options (allowOther).
// Each failure names the fix. (Prepare checks that dir exists, is an empty
// directory and is not already mounted.)
func Precheck(dir string, allowOther bool) error {
	if err := checkFUSE(); err != nil {
		return err
	}
	if err := checkMountPoint(dir); err != nil {
		return err
	}
	return checkFUSEOptions(allowOther, fuseConf)
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

// fuseConf is fuse's configuration, which fusermount3 reads.
const fuseConf = "/etc/fuse.conf"

// checkFUSEOptions refuses the options fusermount3 would refuse this user
// once the Source is loaded: the mount passes ro, default_permissions,
// fsname and subtype, which it takes from anyone, and allow_other, which
// it takes from a user who is not root only with user_allow_other in
// conf. (It also refuses a user past mount_max FUSE mounts.)
func checkFUSEOptions(allowOther bool, conf string) error {
	if os.Geteuid() == 0 {
		return nil
	}
	data, err := os.ReadFile(conf)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("FUSE: %w", err)
	}
	userAllowOther, mountMax := parseFuseConf(string(data))
	if allowOther && !userAllowOther {
		return &AllowOtherError{Conf: conf}
	}
	if n := fuseMounts(); n >= mountMax {
		return fmt.Errorf("FUSE: %d FUSE mounts already, and %s allows %d (mount_max) to a user who is not root: unmount one, or have an administrator raise mount_max", n, conf, mountMax)
	}
	return nil
}

// parseFuseConf reads fuse.conf as fusermount3 does: a line (comments
// from # dropped, blanks trimmed) user_allow_other, and mount_max = N
// (1000 by default).
func parseFuseConf(data string) (userAllowOther bool, mountMax int) {
	mountMax = 1000
	for _, line := range strings.Split(data, "\n") {
		line, _, _ = strings.Cut(line, "#")
		line = strings.TrimSpace(line)
		if line == "user_allow_other" {
			userAllowOther = true
		}
		if v, ok := strings.CutPrefix(line, "mount_max"); ok {
			if v, ok := strings.CutPrefix(strings.TrimSpace(v), "="); ok {
				if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
					mountMax = n
				}
			}
		}
	}
	return userAllowOther, mountMax
}

// AllowOtherError is the refusal of allow_other to a user who is not root
// without user_allow_other in Conf.
type AllowOtherError struct{ Conf string }

func (e *AllowOtherError) Error() string {
	return fmt.Sprintf("FUSE: fusermount3 lets a user who is not root use allow_other only with a line user_allow_other in %s: an administrator can add it, or mount without allow_other, or as root", e.Conf)
}

// fuseMounts counts the FUSE mounts in this mount namespace, as
// fusermount3 counts them against mount_max.
func fuseMounts() int {
	n := 0
	for _, m := range Mounts() {
		if m.Type == "fuse" || strings.HasPrefix(m.Type, "fuse.") {
			n++
		}
	}
	return n
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
