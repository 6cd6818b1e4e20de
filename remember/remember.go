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
