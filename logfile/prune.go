package logfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"rsfs/report"
	"rsfs/statedir"
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

// WritePruned writes what Prune removed from dir (or would remove, for a
// dry run) as `rsfs cache prune` says it: one line per log file, then the
// space freed.
func WritePruned(w io.Writer, dir string, pruned []Pruned, now time.Time, dryRun bool) {
	verb := "removed"
	if dryRun {
		verb = "would remove"
	}
	var freed int64
	for _, p := range pruned {
		freed += p.Size
		fmt.Fprintf(w, "%s %s  %s, last written %s\n", verb, p.Path, report.Size(p.Size), statedir.Ago(now, p.ModTime))
	}
	fmt.Fprintf(w, "%s %d log files (%s) from %s\n", verb, len(pruned), report.Size(freed), dir)
}
