// Package mountsrc opens the Source a mount serves, of either protocol,
// and remembers it across mounts, with the policy for both: where the
// catalog comes from, catching up before the mount is ready, and when it
// is saved. What it remembers lies in the Source's state directory
// (package statedir): a ResourceSync Source's catalog snapshot (the
// catalog and the follower's change positions) and an Atom-PMH feed's
// state.
//
// Open discovers what is at the URL, loads or restores it, and returns a
// Source that nothing follows yet: the protocol.Source the mount serves,
// and the policy beside it (the protocol knows nothing of remembering).
// The mount then builds its file system over the catalog, and Follow makes
// the follower, which tells the function it is given (the file system's
// Notify) of the changes it applies; CatchUp brings the catalog up to date
// through it, for both protocols, before the mount is ready; Run follows.
// For a ResourceSync Source, Open decides where the catalog comes from:
//
//   - a snapshot for the same origin, and the Source reachable: the snapshot,
//     caught up through the Change Lists before the mount is ready (CatchUp;
//     or reloaded, if the Source's resource sets changed since);
//   - a snapshot, and the Source unreachable: the snapshot alone;
//   - otherwise (no snapshot, a damaged one, one for another origin): the
//     Resource Lists, caught up from their time by CatchUp too.
//
// For an Atom-PMH feed: its remembered state, rebuilt with no request by
// Open and caught up with one poll by CatchUp (mounted as remembered, with
// a warning, when the feed cannot be read); otherwise a whole harvest by
// Open, remembered at once. When discovery cannot reach the URL, Open
// rebuilds the feed the state directory remembers (its state names the
// feed's URL), unless a ResourceSync snapshot was saved after it: the state
// saved last is of what the URL served last.
//
// While mounted, the follower's loop (Source.Run) saves a ResourceSync
// catalog fresh from the Resource Lists before its first poll, every
// SaveEvery when changes were applied, and once more when it ends at
// unmount, so that no save runs beside a poll. Every write is atomic
// (package atomicfile).
package mountsrc
