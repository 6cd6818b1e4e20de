// Package remember opens a Source, of either protocol, and keeps what rsfs
// knows of it across mounts, with the policy for using it. Each Source (its
// URL in the canonical form of Key) has a state directory: a ResourceSync Source's catalog snapshot (the
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
// While mounted, the follower's loop (Source.Run) saves a ResourceSync
// catalog fresh from the Resource Lists before its first poll, every
// SaveEvery when changes were applied, and once more when it ends at
// unmount. Every write is
// atomic (package atomicfile).
package remember

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"rsfs/atomicfile"
	"rsfs/origin"
)

// None is the base directory that turns remembering off.
const None = "none"

// Dir returns the state directory of the Source at rawURL under base: base
// "" means the user's cache directory ($XDG_CACHE_HOME/rsfs), None means
// remembering is off (Dir returns ""). The name is the first 8 bytes of
// the SHA-256 of Key(rawURL), in hex, so that one Source however its URL
// is spelled has one state directory (and one lock).
func Dir(base, rawURL string) (string, error) {
	return dirNamed(base, Key(rawURL))
}

// LegacyDir is the state directory rsfs used for rawURL before Dir keyed
// it by Key: the SHA-256 of the URL as typed. A mount moves it to Dir when
// Dir does not exist yet (cmd/rsfs), so a Source's snapshot and disk cache
// survive the change.
func LegacyDir(base, rawURL string) (string, error) {
	return dirNamed(base, rawURL)
}

func dirNamed(base, key string) (string, error) {
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
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(base, hex.EncodeToString(sum[:8])), nil
}

// wellKnown is the path of ResourceSync's well-known URI (RFC 8615), where
// discovery of a site starts.
const wellKnown = "/.well-known/resourcesync"

// Key is the canonical form of a Source's URL, which its state directory
// is named by: the scheme and host in lower case, the scheme's default port
// and any user information dropped, an empty path written "/", and a
// fragment dropped; a site's well-known URI is its root (both start
// discovery at the same document). http://H:80, http://h/ and
// http://h/.well-known/resourcesync all have the key "http://h/". The path
// and query are kept as written. A URL that does not parse is its own key.
func Key(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return rawURL
	}
	o, _ := origin.FromAuthority(u.Scheme, u.Host)
	path := u.EscapedPath()
	if path == "" || path == wellKnown {
		path = "/"
	}
	key := o + path
	if u.RawQuery != "" || u.ForceQuery {
		key += "?" + u.RawQuery
	}
	return key
}

// URLFile, in a state directory, holds the URL of the Source it remembers
// (its Key), for listing: see WriteURL.
const URLFile = "source-url"

// WriteURL records the Source's URL in its state directory dir, unless it
// is there already.
func WriteURL(dir, rawURL string) error {
	key := Key(rawURL)
	path := filepath.Join(dir, URLFile)
	if b, err := os.ReadFile(path); err == nil && string(b) == key+"\n" {
		return nil
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := io.WriteString(w, key+"\n")
		return err
	})
}

// ReadURL returns the Source's URL recorded in its state directory dir, or
// "" if none is (a directory of an rsfs before WriteURL, never mounted
// since).
func ReadURL(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, URLFile))
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(b), "\n")
}

// SnapshotPath is the catalog snapshot in the state directory dir.
func SnapshotPath(dir string) string { return filepath.Join(dir, "catalog.snap") }

// BlocksDir is the disk cache of blocks in the state directory dir.
func BlocksDir(dir string) string { return filepath.Join(dir, "blocks") }
