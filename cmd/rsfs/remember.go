package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"rsfs/catalog"
	"rsfs/source"
)

// loaded is a Source and its catalog, ready to mount.
type loaded struct {
	src       *source.Source
	cat       *catalog.Catalog
	positions map[string]source.Position // from a snapshot; nil when loaded fresh
	// catchUp: the catalog came from a snapshot and the Source is reachable:
	// poll once before the mount is ready. reload: the Source's sets changed
	// since the snapshot.
	catchUp, reload bool
}

// stateDir is where rsfs remembers the Source at rawURL: its catalog
// snapshot and its disk cache of blocks. "" when remembering is off.
func (mf *mountFlags) stateDir(rawURL string) (string, error) {
	base := mf.cacheDir
	if base == "none" {
		return "", nil
	}
	if base == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("--cache-dir: %w", err)
		}
		base = filepath.Join(dir, "rsfs")
	}
	sum := sha256.Sum256([]byte(rawURL))
	return filepath.Join(base, hex.EncodeToString(sum[:8])), nil
}

func snapshotPath(stateDir string) string { return filepath.Join(stateDir, "catalog.snap") }

// load discovers the Source and builds its catalog: from the snapshot when
// there is one (and catches up later), else from the Resource Lists. If the
// Source is unreachable but a snapshot exists, it mounts from the snapshot.
func load(cmd *cobra.Command, mf *mountFlags, rawURL, stateDir string, prog *progress) (*loaded, error) {
	client, err := mf.client(rawURL)
	if err != nil {
		return nil, err
	}
	opts := mf.sourceOptions(client)
	src, discoverErr := source.Discover(cmd.Context(), rawURL, opts)
	snap := readSnapshot(stateDir)
	switch {
	case discoverErr != nil && snap == nil:
		return nil, discoverErr
	case discoverErr != nil:
		slog.Warn("the Source is unreachable; mounting from the snapshot: cached files read, others fail with EIO until it is back",
			"err", discoverErr, "snapshot", snapshotPath(stateDir))
		return &loaded{src: source.Restore(snap.state, opts), cat: snap.cat, positions: snap.state.Positions}, nil
	case snap != nil && src.Origin == snap.state.Origin:
		src.AllowSavedMirrors(snap.state)
		l := &loaded{src: src, cat: snap.cat, positions: snap.state.Positions, catchUp: true}
		if src.SameSets(snap.state) {
			src.AdoptListedAt(snap.state)
		} else {
			slog.Info("the Source's capabilities changed since the snapshot; reloading")
			l.reload = true
		}
		return l, nil
	}
	cat := catalog.New(catalog.Options{Origin: src.Origin})
	st, err := src.Load(cmd.Context(), cat, prog.update)
	prog.done()
	if err != nil {
		return nil, err
	}
	slog.Info("source loaded", "resources", cat.Len(), "lists", st.Lists, "skipped_packages", st.SkippedPackages, "took", st.Duration.Round(time.Millisecond))
	return &loaded{src: src, cat: cat}, nil
}

type snapshot struct {
	cat   *catalog.Catalog
	state *source.State
}

// readSnapshot returns the remembered catalog, or nil (a damaged snapshot
// is logged and ignored: the Resource Lists are read instead). Its origin is
// the one saved: the caller compares it with the Source's, which discovery
// learns from the documents, not from the URL.
func readSnapshot(stateDir string) *snapshot {
	if stateDir == "" {
		return nil
	}
	path := snapshotPath(stateDir)
	start := time.Now()
	cat, data, err := catalog.LoadSnapshot(path, catalog.Options{})
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err == nil {
		var st *source.State
		if st, err = source.DecodeState(data); err == nil {
			slog.Info("catalog loaded from snapshot", "resources", cat.Len(), "took", time.Since(start).Round(time.Millisecond))
			return &snapshot{cat: cat, state: st}
		}
	}
	slog.Warn("snapshot not used", "path", path, "err", err)
	return nil
}

// saveSnapshot writes the catalog and the change positions atomically.
func saveSnapshot(stateDir string, cat *catalog.Catalog, f *source.Follower) {
	if stateDir == "" {
		return
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		slog.Warn("snapshot not saved", "err", err)
		return
	}
	start := time.Now()
	err := f.Snapshot(func(state []byte) error { return cat.SaveSnapshot(snapshotPath(stateDir), state) })
	if err != nil {
		slog.Warn("snapshot not saved", "err", err)
		return
	}
	slog.Debug("snapshot saved", "resources", cat.Len(), "took", time.Since(start).Round(time.Millisecond))
}
