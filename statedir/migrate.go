package statedir

import (
	"log/slog"
	"os"
)

// migrate moves the state directory rsfs named by the URL as typed
// (LegacyDir) to the one named by the Source's canonical key
// (Dir), when only the first exists and no mount holds it, so that
// the snapshot and disk cache of a Source mounted by an earlier rsfs are
// kept.
func migrate(legacy, dir string) {
	if legacy == dir || legacy == "" {
		return
	}
	if _, err := os.Stat(dir); err == nil {
		return
	}
	if _, err := os.Stat(legacy); err != nil {
		return
	}
	l, err := probe(legacy)
	if err != nil {
		slog.Info("state directory of an earlier rsfs not moved", "from", legacy, "to", dir, "err", err)
		return
	}
	defer l.close()
	if err := os.Rename(legacy, dir); err != nil {
		slog.Warn("moving the state directory of an earlier rsfs", "from", legacy, "to", dir, "err", err)
		return
	}
	slog.Info("state directory moved to the Source's canonical name", "from", legacy, "to", dir)
}
