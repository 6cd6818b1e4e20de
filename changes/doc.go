// Package changes follows a ResourceSync Source: it keeps a catalog loaded
// by package source in step with the Source's Change Lists, Change Dumps
// and pushed notifications. A Follower (New) is made once the catalog is
// loaded, or restored from a snapshot with the positions saved beside it
// (Follower.Snapshot, DecodePositions).
//
// Each resource set has a Position: a time, the changes already applied at
// exactly that time (a set of keys, change type and URI, so 100,000 changes
// at one instant cost a lookup each), and Ahead, the changes applied ahead
// of the position by URI (pushed ones, and ones dated more than
// source.FutureBound, a day, after now). A fresh load starts it at the
// set's list time (the oldest at, else modified, else completed, of its
// Resource Lists). A change's time is 1.1's datetime; lastmod, the
// resource's own time, stands in only in a document none of whose entries
// has a datetime (source.DatedByLastmod: 1.0 dated changes by lastmod, and
// its lists carry from and until too, so the header says nothing about
// the version). An undated entry takes the latest time before it in the
// document (1.1 Example 19), else the document's from.
//
// The follower, Truth (drift repair's and audit's) and inspect's follow
// plan (Plan) read change documents through one engine (engine.go): a
// walk of a set's documents, its collector, and the apply plan.
//
// A poll first re-reads the structure by conditional GET (the Source
// Description and every Capability List: a new Change List or dump is
// adopted, a Change List no longer named is read once more, a set added or
// gone reloads), then, per set, every Change List and Change Dump the
// Capability List names, by conditional GET. An index (or 1.0 archive) is
// followed to its children, skipping those its entries close (until)
// before the position; an unchanged index's children are still read; a
// Change List polled directly that is closed is replaced by the index it
// names. Changes past the position are applied in time order, each once,
// the last of several to one URI winning; the position moves past each,
// never past a change that failed, never past now plus a day. When the
// Change Lists start after the position (a gap), the Resource Lists are
// checked once by conditional GET: changed, they are reloaded (Reload,
// which reconciles the catalog and restarts the positions from the lists'
// times); unchanged, the gap is accepted with one warning. A change that
// cannot be applied (a length that cannot be learned, a full catalog)
// holds the position and is retried at the next poll; after maxAttempts
// polls it is given up with an error naming it.
//
// Every change is applied by one applier (apply.go) whose failure policy
// (hold, skip, abort) and position policy (advance, ahead, none) are its
// parameters: polls and pushes hold; a Resource List's differences and
// drift repair skip, in the log and the status; Truth aborts. What could
// not be read, polls' change documents among it, is kept in source's one
// registry of unread documents (source.Source.Unread, RetryUnread).
//
// Pushed notifications (Subscribe, RunPush) are applied at once and marked
// ahead, so the position does not move and the next poll still applies
// every earlier change, not the pushed one again. A Framework Notification
// re-reads exactly the document it names: a Change List, a Resource List
// (its differences from the catalog applied), or the set's Capability
// List; any other document asks for an early poll of its set. Polls, early
// ones included (PollSoon: one set's change documents, not the structure,
// when a read finds its file changed), are run one at a time by the
// follow.Loop (package rsfs/follow) a Follower embeds; polls and pushes
// apply one batch at a time, under a lock never held across I/O.
package changes
