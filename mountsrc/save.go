package mountsrc

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"rsfs/catalog"
	"rsfs/changes"
	"rsfs/statedir"
)

// saveSnapshot writes cat and f's change positions to the snapshot in the state
// directory dir, atomically. With dir "" it does nothing.
func saveSnapshot(dir string, cat *catalog.Catalog, f *changes.Follower) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	start := time.Now()
	err := f.Snapshot(func(state []byte) error { return cat.SaveSnapshot(statedir.SnapshotPath(dir), state) })
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	slog.Debug("snapshot saved", "resources", cat.Len(), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// saveSnapshotLogged is Save that logs a failure: a snapshot not saved costs the
// next mount a full load, not this one anything.
func saveSnapshotLogged(dir string, cat *catalog.Catalog, f *changes.Follower) {
	if err := saveSnapshot(dir, cat, f); err != nil {
		slog.Warn("snapshot not saved", "err", err)
	}
}
