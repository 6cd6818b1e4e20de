package mountsrc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"rsfs/catalog"
	"rsfs/changes"
	"rsfs/discover"
	"rsfs/protocol"
	"rsfs/source"
	"rsfs/statedir"
)

// Loaded is a Source and its catalog, ready to mount.
type Loaded struct {
	Source  *source.Source
	Catalog *catalog.Catalog
	// Positions are the change positions from the snapshot; nil when the
	// catalog was read from the Resource Lists.
	Positions map[string]changes.Position
	// NeedsCatchUp: the Source is reachable, so CatchUp has work to do
	// before the mount is ready: the changes published since the snapshot,
	// or, for a catalog fresh from the Resource Lists, since their time.
	NeedsCatchUp bool
	// Reload: the Source's resource sets changed since the snapshot, so
	// catching up reloads them.
	Reload bool
}

// Fresh reports whether the catalog was read from the Resource Lists, so
// that it is worth saving at once.
func (l *Loaded) Fresh() bool { return l.Positions == nil }

// discoverAndLoad discovers the Source at rawURL and builds its catalog from the
// snapshot in the state directory dir ("" for none) or from the Resource
// Lists, as the package documentation says. progress sees the Resource
// Lists being read.
func discoverAndLoad(ctx context.Context, dir, rawURL string, opts source.Options, progress func(source.Progress)) (*Loaded, error) {
	found, err := discover.At(ctx, rawURL, opts)
	if err == nil && found.Protocol() != protocol.ResourceSync {
		return nil, fmt.Errorf("%s: a %s Source, not a ResourceSync one", rawURL, found.Protocol())
	}
	var src *source.Source
	if found != nil {
		src = found.Source
	}
	return load(ctx, dir, src, err, opts, progress)
}

// load builds the catalog of the ResourceSync Source discovery found (src),
// or that it could not reach (discoverErr), as Load says.
func load(ctx context.Context, dir string, src *source.Source, discoverErr error, opts source.Options, progress func(source.Progress)) (*Loaded, error) {
	snap := readSnapshot(dir)
	switch {
	case discoverErr != nil && snap == nil:
		return nil, discoverErr
	case discoverErr != nil:
		slog.Warn("the Source is unreachable; mounting from the snapshot: cached files read, others fail with EIO until it is back",
			"err", discoverErr, "snapshot", statedir.SnapshotPath(dir))
		return &Loaded{Source: source.Restore(snap.state, opts), Catalog: snap.cat, Positions: snap.positions}, nil
	case snap != nil && src.Origin == snap.state.Origin:
		src.AllowSavedMirrors(snap.state)
		l := &Loaded{Source: src, Catalog: snap.cat, Positions: snap.positions, NeedsCatchUp: true}
		src.KeepSavedSets(snap.state) // a set whose Capability List fails now keeps what the snapshot holds
		if src.SameSets(snap.state) {
			src.AdoptListedAt(snap.state)
			src.AdoptUnreadDumps(snap.state)
		} else {
			slog.Info("the Source's capabilities changed since the snapshot; reloading")
			l.Reload = true
		}
		return l, nil
	}
	cat := catalog.New(catalog.Options{Origin: src.Origin})
	st, err := src.Load(ctx, cat, progress)
	if err != nil {
		return nil, err
	}
	slog.Info("source loaded", "resources", cat.Len(), "lists", st.Lists, "skipped_packages", st.SkippedPackages, "took", st.Duration.Round(time.Millisecond))
	return &Loaded{Source: src, Catalog: cat, NeedsCatchUp: true}, nil
}

// CatchUp brings the catalog up to date through f (a follower of l's
// Source and catalog) before the mount is ready, with following on or off:
// one poll through the Change Lists and Change Dumps (from the Resource
// Lists' time when fresh, from the snapshot's positions when restored), or
// a reload when the Source's resource sets changed since the snapshot. It
// does nothing for an unreachable Source.
func (l *Loaded) CatchUp(ctx context.Context, f *changes.Follower) error {
	switch {
	case l.Reload:
		return f.Reload(ctx)
	case l.NeedsCatchUp:
		start := time.Now()
		defer l.Source.ForgetLoad() // the load's reads, which the catch-up took from
		if err := f.Poll(ctx); err != nil {
			return err // the caller says it, and status shows the set degraded
		}
		slog.Info("caught up through the Change Lists", "took", time.Since(start).Round(time.Millisecond), "changes", f.Stats().Applied)
		return nil
	}
	return nil
}

type snapshot struct {
	cat       *catalog.Catalog
	state     *source.State
	positions map[string]changes.Position // state.Positions, decoded
}

// readSnapshot returns the remembered catalog, or nil (a damaged snapshot
// is logged and ignored: the Resource Lists are read instead). Its origin is
// the one saved: Load compares it with the Source's, which discovery learns
// from the documents, not from the URL.
func readSnapshot(dir string) *snapshot {
	if dir == "" {
		return nil
	}
	path := statedir.SnapshotPath(dir)
	start := time.Now()
	cat, data, err := catalog.LoadSnapshot(path, catalog.Options{})
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err == nil {
		var st *source.State
		var positions map[string]changes.Position
		if st, err = source.DecodeState(data); err == nil {
			positions, err = changes.DecodePositions(st.Positions)
		}
		if err == nil {
			slog.Info("catalog loaded from snapshot", "resources", cat.Len(), "took", time.Since(start).Round(time.Millisecond))
			return &snapshot{cat: cat, state: st, positions: positions}
		}
	}
	slog.Warn("snapshot not used", "path", path, "err", err)
	return nil
}
