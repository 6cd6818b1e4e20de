// Package statedir is where rsfs keeps what it remembers of a Source, and
// the policy for those places: each Source (its URL in the canonical form
// of Key) has a state directory under a base (--cache-dir, by default the
// user's cache directory's rsfs) named by its key (Dir); it holds the
// Source's URL (WriteURL, for listing), a ResourceSync Source's catalog
// snapshot (SnapshotPath), an Atom-PMH feed's state (FeedPath) and the disk
// cache of blocks (BlocksDir, owned by package cache). One mount holds a
// state directory at a time (Take); the directories are listed (List) and
// the least recently used removed (Prune; Take keeps them within a total);
// one an earlier rsfs named by the URL as typed is moved to its key's name
// (Resolve). What the files hold, and when they are written, is package
// mountsrc's.
package statedir

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
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
// it by Key: the SHA-256 of the URL as typed. Resolve moves it to Dir when
// Dir does not exist yet, so a Source's snapshot and disk cache survive the
// change.
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

// FeedPath is where the state of an Atom-PMH feed is remembered in the
// state directory dir (the feed's harvest state and the sizes it learned;
// package atomfeed encodes it).
func FeedPath(dir string) string { return filepath.Join(dir, "feed.state") }

// Resolve is the state directory of the Source at rawURL under cacheDir
// (--cache-dir: "" for the user's cache directory, None for none, when it
// is ""): named by the Source's canonical URL (Key); one an earlier rsfs
// named by the URL as typed is moved there first.
func Resolve(cacheDir, rawURL string) (string, error) {
	base := Base(cacheDir)
	dir, err := Dir(base, rawURL)
	if err != nil {
		return "", err
	}
	if legacy, err := LegacyDir(base, rawURL); err == nil {
		migrate(legacy, dir)
	}
	return dir, nil
}

// Base is the directory that holds the state directories: cacheDir, or
// the user's cache directory's rsfs (root's under systemd: /var/cache's).
// None stays None; "" when there is no user cache directory.
func Base(cacheDir string) string {
	if cacheDir == "" {
		if d, err := UserCacheDir(); err == nil {
			return filepath.Join(d, "rsfs") // Dir's default, or root's under systemd
		}
	}
	return cacheDir
}

// UserCacheDir is os.UserCacheDir, except that root without $HOME or
// $XDG_CACHE_HOME (a mount started by systemd from /etc/fstab, whose
// manager sets neither) gets /var/cache.
func UserCacheDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil && os.Getuid() == 0 {
		return filepath.Join("/var", "cache"), nil
	}
	return dir, err
}

// CheckBase confirms that the base of the state directories for cacheDir
// (Base) can be written, unless remembering is off; it creates the base,
// not a state directory (a mount that fails leaves none).
func CheckBase(cacheDir string) error {
	base := Base(cacheDir)
	switch base {
	case None:
		return nil
	case "":
		return errors.New("state directory: no cache directory ($XDG_CACHE_HOME and $HOME are unset)")
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	f, err := os.CreateTemp(base, ".write-test-*")
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	f.Close()
	return os.Remove(f.Name())
}
