package logfile

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// Pruned is a log file Prune removed, or would remove.
type Pruned struct {
	Path    string
	Size    int64
	ModTime time.Time
}

// Prune removes the log files in the default directory (Dir) last written
// longer ago than olderThan before now, but never the log of a mount that
// is running: live are the mount points of those. With dryRun it removes
// nothing and says what it would. It returns the directory and what went;
// no directory is no error.
func Prune(olderThan time.Duration, now time.Time, dryRun bool, live []string) (string, []Pruned, error) {
	dir, err := Dir()
	if err != nil {
		return "", nil, nil // no user cache directory: no default logs either
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, nil
	}
	if err != nil {
		return dir, nil, fmt.Errorf("logs: %w", err)
	}
	keep := map[string]bool{}
	for _, mp := range live {
		keep[EscapePath(mp)+".log"] = true
	}
	var pruned []Pruned
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || keep[e.Name()] || now.Sub(info.ModTime()) <= olderThan {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if !dryRun {
			if err := os.Remove(path); err != nil {
				slog.Warn("removing a log file", "file", path, "err", err)
				continue
			}
		}
		pruned = append(pruned, Pruned{Path: path, Size: info.Size(), ModTime: info.ModTime()})
	}
	return dir, pruned, nil
}
