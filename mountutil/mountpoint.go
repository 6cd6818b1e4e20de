// Package mountutil prepares mount points and checks, before anything is
// downloaded, that FUSE will mount there (Precheck); reads the mount table;
// cleans up stale mounts, unmounts, handles signals and runs a mount in the
// background; and keeps the hold files of `rsfs hold` and the handshake
// that writes them (Holder). It names no flag of rsfs: its refusals are
// typed errors the command words.
package mountutil

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrNotEmpty is Prepare's refusal of a mount point that is not empty.
var ErrNotEmpty = errors.New("not empty")

// Prepare checks that dir can be mounted on: it exists, is a directory, and
// is empty unless allowNonEmpty. A stale FUSE mount at dir (its server gone:
// "transport endpoint is not connected") is detached first.
func Prepare(dir string, allowNonEmpty bool) error {
	if err := cleanStale(dir); err != nil {
		return err
	}
	if fstype, source, ok := MountedAt(dir); ok && fstype != "autofs" {
		return fmt.Errorf("mountpoint %s: already a mount point (of %s, type %s): unmount it first", dir, source, fstype)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("mountpoint %s: %w", dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("mountpoint %s: not a directory", dir)
	}
	if allowNonEmpty {
		return nil
	}
	empty, err := isEmpty(dir)
	if err != nil {
		return fmt.Errorf("mountpoint %s: %w", dir, err)
	}
	if !empty {
		return fmt.Errorf("mountpoint %s: %w", dir, ErrNotEmpty)
	}
	return nil
}

// MountedAt reports what is mounted at dir (the topmost mount, from
// /proc/self/mountinfo): its file system type and source. An autofs mount
// point (systemd's automount) is what a mount is made on, and is reported
// like any other.
func MountedAt(dir string) (fstype, source string, ok bool) {
	for _, m := range Mounts() {
		if m.Dir == dir {
			fstype, source, ok = m.Type, m.Source, true
		}
	}
	return fstype, source, ok
}

// Mount is a line of the mount table.
type Mount struct {
	Dir    string // the mount point
	Type   string // the file system type: fuse.rsfs for rsfs
	Source string // for rsfs, the Source's URL
}

// Mounts is this mount namespace's mount table, from /proc/self/mountinfo,
// in its order (a mount over another comes after it); nil if it cannot be
// read.
func Mounts() []Mount {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	return parseMountinfo(string(data))
}

// parseMountinfo reads mountinfo lines:
// id parent major:minor root mountpoint options [optional...] - fstype source super
func parseMountinfo(data string) []Mount {
	var out []Mount
	for _, line := range strings.Split(data, "\n") {
		before, after, ok := strings.Cut(line, " - ")
		f, tail := strings.Fields(before), strings.Fields(after)
		if !ok || len(f) < 5 || len(tail) < 2 {
			continue
		}
		out = append(out, Mount{Dir: unescapeMountinfo(f[4]), Type: tail[0], Source: unescapeMountinfo(tail[1])})
	}
	return out
}

// unescapeMountinfo undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// IsStale reports whether dir is a mount whose FUSE server is gone. It asks
// statfs, which the kernel never answers from its caches.
func IsStale(dir string) bool {
	var st syscall.Statfs_t
	return errors.Is(syscall.Statfs(dir, &st), syscall.ENOTCONN)
}

func cleanStale(dir string) error {
	if !IsStale(dir) {
		return nil
	}
	if err := Detach(dir); err != nil {
		return fmt.Errorf("mountpoint %s: stale mount (transport endpoint is not connected) could not be detached: %w", dir, err)
	}
	return nil
}

func isEmpty(dir string) (bool, error) {
	f, err := os.Open(dir)
	if err != nil {
		return false, err
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	if errors.Is(err, io.EOF) {
		return true, nil
	}
	return false, err
}

// Detach detaches the mount at dir lazily (MNT_DETACH): it leaves the
// namespace at once, and ends when its last open file is closed. This is
// how a stale mount (its server gone) is cleaned up. A user who is not root
// asks fusermount3 -uz.
func Detach(dir string) error {
	err := syscall.Unmount(dir, syscall.MNT_DETACH)
	if errors.Is(err, syscall.EPERM) {
		return fusermount(dir, "-uz")
	}
	if err != nil {
		return fmt.Errorf("detach %s: %w", dir, err)
	}
	return nil
}

// fusermount runs fusermount3 (or fusermount) with flag on dir.
func fusermount(dir, flag string) error {
	bin, err := fusermountBinary()
	if err != nil {
		return fmt.Errorf("unmount %s: not root, and %w", dir, err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, flag, dir)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return fmt.Errorf("%s %s %s: %s: %w", filepath.Base(bin), flag, dir, msg, err)
		}
		return fmt.Errorf("%s %s %s: %w", filepath.Base(bin), flag, dir, err)
	}
	return nil
}

// fusermountBinary finds the helper as go-fuse does: fusermount3, then
// fusermount, on $PATH or in /bin.
func fusermountBinary() (string, error) {
	for _, name := range []string{"fusermount3", "fusermount"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
		if p, err := exec.LookPath(filepath.Join("/bin", name)); err == nil {
			return p, nil
		}
	}
	return "", errors.New("fusermount3 is not installed (Debian: apt install fuse3)")
}

// RsfsMounts lists the rsfs mounts now (Mounts): their mount
// points, their Sources' URLs, or both, those that start with prefix.
func RsfsMounts(prefix string, dirs, urls bool) []string {
	var out []string
	for _, m := range Mounts() {
		if m.Type != "fuse.rsfs" {
			continue
		}
		if dirs && strings.HasPrefix(m.Dir, prefix) {
			out = append(out, m.Dir)
		}
		if urls && strings.HasPrefix(m.Source, prefix) {
			out = append(out, m.Source)
		}
	}
	return out
}
