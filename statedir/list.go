package statedir

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"
)

// Info describes one state directory under a base.
type Info struct {
	Name     string    `json:"name"`          // 16 hex digits
	Dir      string    `json:"dir"`           // its path
	URL      string    `json:"url,omitempty"` // the Source's URL, when recorded
	Size     int64     `json:"size"`          // bytes on disk
	LastUsed time.Time `json:"last_used"`
	// Mounted: a live mount holds its lock (or one is closing).
	Mounted    bool   `json:"mounted"`
	PID        int    `json:"pid,omitempty"`
	MountPoint string `json:"mount_point,omitempty"`
}

// isName reports whether name is a state directory's (Dir: 16 hex
// digits).
func isName(name string) bool {
	if len(name) != 16 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// List describes every state directory under base, least recently used
// first. A missing base holds none.
func List(base string) ([]Info, error) {
	entries, err := os.ReadDir(base)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, e := range entries {
		if !e.IsDir() || !isName(e.Name()) {
			continue
		}
		d := filepath.Join(base, e.Name())
		info := Info{Name: e.Name(), Dir: d, URL: ReadURL(d)}
		info.Size, info.LastUsed = dirUsage(d)
		if _, err := os.Stat(filepath.Join(d, "lock")); err == nil { // else never mounted
			l, err := probe(d)
			var locked *LockedError
			switch {
			case errors.As(err, &locked):
				info.Mounted, info.PID, info.MountPoint = true, locked.PID, locked.Owner
			case err == nil:
				l.close()
			}
		}
		out = append(out, info)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].LastUsed.Before(out[j].LastUsed) })
	return out, nil
}

// dirUsage is the disk space under dir and when it was last used: the
// newest modification time of its files (the lock, written at each mount;
// the snapshot, saved while mounted and at unmount; the disk cache's
// directories, changed as blocks are written).
func dirUsage(dir string) (int64, time.Time) {
	var size int64
	var last time.Time
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			size += st.Blocks * 512
		} else {
			size += info.Size()
		}
		if info.ModTime().After(last) {
			last = info.ModTime()
		}
		return nil
	})
	return size, last
}

// PruneOptions say which state directories Prune removes.
type PruneOptions struct {
	// OlderThan: those last used longer ago than this; 0: none by age.
	OlderThan time.Duration
	// MaxTotal: then the least recently used, until all together take at
	// most this; 0: no limit.
	MaxTotal int64
	// All: every one no mount holds (cache prune --max-size 0).
	All bool
	// Keep is a state directory never removed (the mount's own).
	Keep   string
	DryRun bool
	Now    time.Time
}

// Prune removes state directories under base as opts say, least
// recently used first, never one a live mount holds (nor one that is
// closing). It returns those it removed (or would, with DryRun), and the
// total left.
func Prune(base string, opts PruneOptions) ([]Info, int64, error) {
	dirs, err := List(base)
	if err != nil {
		return nil, 0, err
	}
	var total int64
	for _, d := range dirs {
		total += d.Size
	}
	var pruned []Info
	for _, d := range dirs { // least recently used first
		old := opts.OlderThan > 0 && opts.Now.Sub(d.LastUsed) > opts.OlderThan
		over := opts.All || (opts.MaxTotal > 0 && total > opts.MaxTotal)
		if d.Mounted || d.Dir == opts.Keep || (!old && !over) {
			continue
		}
		if !opts.DryRun {
			if err := remove(base, d.Dir); err != nil {
				var locked *LockedError
				if !errors.As(err, &locked) {
					slog.Warn("removing a state directory", "dir", d.Dir, "err", err)
				}
				continue
			}
		}
		total -= d.Size
		pruned = append(pruned, d)
	}
	return pruned, total, nil
}

// remove removes dir under base while holding its lock, so that a
// mount starting meanwhile is refused rather than finding it half gone;
// the directory is first renamed out of the way, so that one starting just
// after gets a new one.
func remove(base, dir string) error {
	l, err := probe(dir)
	if err != nil {
		return err
	}
	defer l.close()
	gone := filepath.Join(base, ".pruning-"+filepath.Base(dir)+"-"+strconv.Itoa(os.Getpid()))
	if err := os.Rename(dir, gone); err != nil {
		return err
	}
	return os.RemoveAll(gone)
}

// autoPrune keeps the state directories under base, together, within max
// (Take's totalMax), removing the least recently used that no mount
// holds; keep, the mount's own, stays whatever its size.
func autoPrune(base, keep string, max int64) {
	if max <= 0 {
		return
	}
	pruned, total, err := Prune(base, PruneOptions{MaxTotal: max, Keep: keep, Now: time.Now()})
	if err != nil {
		slog.Warn("keeping the state directories within their total: listing them", "err", err)
		return
	}
	for _, d := range pruned {
		slog.Info("state directory removed to keep them all within their total", "max", max, "dir", d.Dir, "url", d.URL, "size", d.Size, "last_used", d.LastUsed.UTC().Format(time.RFC3339))
	}
	if total > max {
		slog.Warn("state directories above their total: the rest are mounted", "total", total, "max", max)
	}
}
