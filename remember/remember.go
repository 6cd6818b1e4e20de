// Package remember opens a Source, of either protocol, and keeps what rsfs
// knows of it across mounts, with the policy for using it. Each Source URL
// has a state directory: a ResourceSync Source's catalog snapshot (the
// catalog and the follower's change positions), an Atom-PMH feed's state
// (feed.state), and the disk cache of blocks (owned by package cache).
//
// Open discovers what is at the URL and returns a protocol.Source. For a
// ResourceSync Source, Load decides where the catalog comes from:
//
//   - a snapshot for the same origin, and the Source reachable: the snapshot,
//     caught up through the Change Lists before the mount is ready (CatchUp;
//     or reloaded, if the Source's resource sets changed since);
//   - a snapshot, and the Source unreachable: the snapshot alone;
//   - otherwise (no snapshot, a damaged one, one for another origin): the
//     Resource Lists.
//
// For an Atom-PMH feed: its remembered state, rebuilt with no request and
// caught up with one poll before the mount is ready (mounted as remembered,
// with a warning, when the feed cannot be read); otherwise a whole harvest,
// remembered at once.
//
// While mounted, the follower's loop saves every SaveEvery when changes
// were applied, and once more when it ends at unmount. Every write is
// atomic (package atomicfile).
package remember

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// None is the base directory that turns remembering off.
const None = "none"

// Dir returns the state directory of the Source at rawURL under base: base
// "" means the user's cache directory ($XDG_CACHE_HOME/rsfs), None means
// remembering is off (Dir returns ""). The name is the first 8 bytes of
// the SHA-256 of rawURL, in hex.
func Dir(base, rawURL string) (string, error) {
	if base == None {
		return "", nil
	}
	if base == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("state directory: %w", err)
		}
		base = filepath.Join(dir, "rsfs")
	}
	sum := sha256.Sum256([]byte(rawURL))
	return filepath.Join(base, hex.EncodeToString(sum[:8])), nil
}

// SnapshotPath is the catalog snapshot in the state directory dir.
func SnapshotPath(dir string) string { return filepath.Join(dir, "catalog.snap") }

// BlocksDir is the disk cache of blocks in the state directory dir.
func BlocksDir(dir string) string { return filepath.Join(dir, "blocks") }
