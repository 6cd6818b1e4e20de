package mountutil

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"rsfs/atomicfile"
)

// HoldPath is the file that holds changes back for the mount at dir: while
// it names a time in the future, the mount applies no change, so a backup
// job sees a stable tree. A mount computes it once, from its own
// $XDG_RUNTIME_DIR, and says in its status where it is (hold_file), so
// that `rsfs hold` and `rsfs release` write where the mount looks whoever
// runs them (sudo, another session).
func HoldPath(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(runtimeDir(), "hold-"+hex.EncodeToString(sum[:8]))
}

func runtimeDir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "rsfs")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("rsfs-%d", os.Getuid()))
}

// PrepareHoldDir makes the directory of a mount's hold file, so that
// whoever holds the mount can write there.
func PrepareHoldDir(path string) error {
	return os.MkdirAll(filepath.Dir(path), 0o700)
}

var holdName = regexp.MustCompile(`^hold-[0-9a-f]{16}$`)

// CheckHoldFile refuses a hold file a mount announced that is not one:
// another name, or in a directory that is a symlink, that others may write
// to, or that neither root nor owner (the mount's user; -1: unknown) owns.
// It keeps `sudo rsfs hold` from writing where a mount's user points it.
func CheckHoldFile(path string, owner int) error {
	if !filepath.IsAbs(path) || !holdName.MatchString(filepath.Base(path)) {
		return fmt.Errorf("hold file %q: not a hold file's name", path)
	}
	dir := filepath.Dir(path)
	st, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("hold file %s: %w", path, err)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	switch {
	case !st.IsDir():
		return fmt.Errorf("hold file %s: %s is not a directory", path, dir)
	case st.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("hold file %s: others may write to %s", path, dir)
	case !ok:
		return fmt.Errorf("hold file %s: cannot tell who owns %s", path, dir)
	case sys.Uid != 0 && int(sys.Uid) != owner && int(sys.Uid) != os.Getuid():
		return fmt.Errorf("hold file %s: %s belongs to uid %d, not to the mount's user", path, dir, sys.Uid)
	}
	if real, err := filepath.EvalSymlinks(dir); err != nil || real != filepath.Clean(dir) {
		return fmt.Errorf("hold file %s: its directory is reached through a symlink", path)
	}
	return nil
}

// WriteHold holds changes back until until at the mount whose hold file is
// path: written whole and durably (atomicfile), owned by the owner of its
// directory, so that the mount can read and remove it.
func WriteHold(path string, until time.Time) error {
	st, err := os.Stat(filepath.Dir(path))
	if err != nil {
		return err
	}
	var opts []atomicfile.Option
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		opts = append(opts, atomicfile.Owner(int(sys.Uid), int(sys.Gid)))
	}
	return atomicfile.WriteBytes(path, []byte(until.UTC().Format(time.RFC3339Nano)+"\n"), opts...)
}

// RemoveHold ends the hold at the mount whose hold file is path. There
// being none is no error.
func RemoveHold(path string) error {
	err := os.Remove(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Held reports whether the hold file at path holds changes back now. An
// expired hold is removed.
func Held(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	until, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(data)))
	if err != nil || !time.Now().Before(until) {
		_ = os.Remove(path)
		return false
	}
	return true
}
