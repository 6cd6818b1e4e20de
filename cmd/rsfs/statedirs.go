package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"rsfs/mountutil"
	"rsfs/remember"
)

// defaultCacheTotalMax bounds the state directories under one --cache-dir
// together: each holds up to --cache-max-size (10 GiB) of disk cache, and
// a user who mounts many Sources in turn would otherwise fill the disk.
const defaultCacheTotalMax = "40GiB"

// stateDirInfo describes one state directory under a --cache-dir.
type stateDirInfo struct {
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

// isStateDirName reports whether name is a state directory's (remember.Dir:
// 16 hex digits).
func isStateDirName(name string) bool {
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

// listStateDirs describes every state directory under base, least
// recently used first. A missing base holds none.
func listStateDirs(base string) ([]stateDirInfo, error) {
	entries, err := os.ReadDir(base)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []stateDirInfo
	for _, e := range entries {
		if !e.IsDir() || !isStateDirName(e.Name()) {
			continue
		}
		d := filepath.Join(base, e.Name())
		info := stateDirInfo{Name: e.Name(), Dir: d, URL: remember.ReadURL(d)}
		info.Size, info.LastUsed = dirUsage(d)
		if _, err := os.Stat(filepath.Join(d, "lock")); err == nil { // else never mounted
			l, err := mountutil.TryLockDir(d)
			var locked *mountutil.LockedError
			switch {
			case errors.As(err, &locked):
				info.Mounted, info.PID, info.MountPoint = true, locked.PID, locked.Owner
			case err == nil:
				_ = l.Close()
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

// pruneOptions say which state directories pruneStateDirs removes.
type pruneOptions struct {
	// OlderThan: those last used longer ago than this; 0: none by age.
	OlderThan time.Duration
	// MaxTotal: then the least recently used, until all together take at
	// most this; 0: no limit.
	MaxTotal int64
	// Keep is a state directory never removed (the mount's own).
	Keep   string
	DryRun bool
	Now    time.Time
}

// pruneStateDirs removes state directories under base as opts say, least
// recently used first, never one a live mount holds (nor one that is
// closing). It returns those it removed (or would, with DryRun), and the
// total left.
func pruneStateDirs(base string, opts pruneOptions) ([]stateDirInfo, int64, error) {
	dirs, err := listStateDirs(base)
	if err != nil {
		return nil, 0, err
	}
	var total int64
	for _, d := range dirs {
		total += d.Size
	}
	var pruned []stateDirInfo
	for _, d := range dirs { // least recently used first
		old := opts.OlderThan > 0 && opts.Now.Sub(d.LastUsed) > opts.OlderThan
		over := opts.MaxTotal > 0 && total > opts.MaxTotal
		if d.Mounted || d.Dir == opts.Keep || (!old && !over) {
			continue
		}
		if !opts.DryRun {
			if err := removeStateDir(base, d.Dir); err != nil {
				var locked *mountutil.LockedError
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

// removeStateDir removes dir under base while holding its lock, so that a
// mount starting meanwhile is refused rather than finding it half gone;
// the directory is first renamed out of the way, so that one starting just
// after gets a new one.
func removeStateDir(base, dir string) error {
	l, err := mountutil.TryLockDir(dir)
	if err != nil {
		return err
	}
	defer l.Close()
	gone := filepath.Join(base, ".pruning-"+filepath.Base(dir)+"-"+strconv.Itoa(os.Getpid()))
	if err := os.Rename(dir, gone); err != nil {
		return err
	}
	return os.RemoveAll(gone)
}

// parseAge reads a duration that may also be given in days ("30d") or
// weeks ("2w"), as time.ParseDuration does not.
func parseAge(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(t, suffix); ok {
			v, err := strconv.ParseFloat(n, 64)
			if err != nil || v < 0 {
				return 0, fmt.Errorf("%q is not an age (e.g. 30d, 12h)", s)
			}
			return time.Duration(v * float64(unit)), nil
		}
	}
	d, err := time.ParseDuration(t)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not an age (e.g. 30d, 12h)", s)
	}
	return d, nil
}

// migrateStateDir moves the state directory rsfs named by the URL as typed
// (remember.LegacyDir) to the one named by the Source's canonical key
// (remember.Dir), when only the first exists and no mount holds it, so that
// the snapshot and disk cache of a Source mounted by an earlier rsfs are
// kept.
func migrateStateDir(legacy, dir string) {
	if legacy == dir || legacy == "" {
		return
	}
	if _, err := os.Stat(dir); err == nil {
		return
	}
	if _, err := os.Stat(legacy); err != nil {
		return
	}
	l, err := mountutil.TryLockDir(legacy)
	if err != nil {
		slog.Info("state directory of an earlier rsfs not moved", "from", legacy, "to", dir, "err", err)
		return
	}
	defer l.Close()
	if err := os.Rename(legacy, dir); err != nil {
		slog.Warn("moving the state directory of an earlier rsfs", "from", legacy, "to", dir, "err", err)
		return
	}
	slog.Info("state directory moved to the Source's canonical name", "from", legacy, "to", dir)
}

// autoPrune keeps the state directories under base, together, within max
// (--cache-total-max), removing the least recently used that no mount
// holds; keep, the mount's own, stays whatever its size.
func autoPrune(base, keep string, max int64) {
	if max <= 0 {
		return
	}
	pruned, total, err := pruneStateDirs(base, pruneOptions{MaxTotal: max, Keep: keep, Now: time.Now()})
	if err != nil {
		slog.Warn("--cache-total-max: listing state directories", "err", err)
		return
	}
	for _, d := range pruned {
		slog.Info("state directory removed (--cache-total-max)", "dir", d.Dir, "url", d.URL, "size", d.Size, "last_used", d.LastUsed.UTC().Format(time.RFC3339))
	}
	if total > max {
		slog.Warn("state directories above --cache-total-max: the rest are mounted", "total", total, "max", max)
	}
}
