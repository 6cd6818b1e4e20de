// Package protocol is what the mount path needs of a protocol, whichever
// it is. A protocol discovers a Source, loads it into a catalog (or
// restores it from what rsfs remembers), says where each resource's bytes
// come from, follows the Source through a follow.Loop, and reports its
// status. ResourceSync (packages source and changes) and Atom-PMH (package
// atomfeed) each implement Source; package mountsrc opens either, and
// cmd/rsfs serves what it opened without knowing which it is.
package protocol

import (
	"context"

	"rsfs/cache"
	"rsfs/catalog"
	"rsfs/fetch"
	"rsfs/status"
)

// The protocols rsfs mounts, by the names status, logs and the extended
// attributes (user.<name>.*) use.
const (
	ResourceSync = "resourcesync"
	AtomPMH      = "atompmh"
)

// Source is a Source of some protocol, loaded into a sealed catalog and
// ready to be served and followed.
type Source interface {
	// Protocol is ResourceSync or AtomPMH.
	Protocol() string
	// Origin is the Source's canonical origin: resources on it map to the
	// root of the tree.
	Origin() string
	Client() *fetch.Client
	Catalog() *catalog.Catalog
	// Fetcher returns where a resource's bytes come from (package copies).
	Fetcher(r *catalog.Resource) cache.Fetcher
	// Batch reads several small resources at once where the protocol can
	// (adjacent dump members), nil for the others; nil when it cannot.
	Batch() func(ctx context.Context, rs []*catalog.Resource) [][]byte
	// Follower follows the Source: made by the opener once the file
	// system its effects reach exists (mountsrc.Source.Follow); nil before.
	Follower() Follower
}

// Follower is a protocol's follower: a follow.Loop over the protocol's
// poll, and the protocol's part of the status.
type Follower interface {
	Run(ctx context.Context)
	Poll(ctx context.Context) error
	// PollNow asks Run for a whole poll now and waits for it
	// (follow.Loop.PollNow: `rsfs poll`).
	PollNow(ctx context.Context) error
	PollSoon(set uint16)
	Status() status.Follow
	// Polling (the loop's) and Applied (the changes applied so far) cost
	// nothing, for a status line read often: Status may walk the catalog.
	Polling() status.Polling
	Applied() int64
}
