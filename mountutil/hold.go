package mountutil

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"rsfs/atomicfile"
	"strings"
	"time"
)

// HoldPath is the file that holds changes back for the mount at dir: while
// it names a time in the future, the mount applies no change, so a backup
// job sees a stable tree. `rsfs hold` writes it and `rsfs release` removes
// it.
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

// Hold holds changes back at dir until now+d.
func Hold(dir string, d time.Duration) (time.Time, error) {
	until := time.Now().Add(d).UTC()
	path := HoldPath(dir)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return time.Time{}, fmt.Errorf("hold %s: %w", dir, err)
	}
	if err := atomicfile.WriteBytes(path, []byte(until.Format(time.RFC3339Nano)+"\n")); err != nil {
		return time.Time{}, fmt.Errorf("hold %s: %w", dir, err)
	}
	return until, nil
}

// Release ends a hold at dir.
func Release(dir string) error {
	err := os.Remove(HoldPath(dir))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("release %s: %w", dir, err)
	}
	return nil
}

// Held reports whether changes at dir are held back now. An expired hold
// is removed.
func Held(dir string) bool {
	path := HoldPath(dir)
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
