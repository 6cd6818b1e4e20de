// Package sourcetest serves a generated ResourceSync Source on 127.0.0.1 for
// tests and benchmarks. Bodies are generated deterministically from (seed,
// resource index, version), so a Source of a million resources costs little
// memory; documents are rendered per request and streamed.
//
// Every document it serves (Source Description, Capability Lists, Resource
// and Change Lists and their indexes, dump manifests, notification payloads)
// is rendered with rsfs's own resourcesync.Writer. A test that reads this
// Source with rsfs's resourcesync.Reader therefore cannot catch a bug that
// the writer and the reader share: a misreading of the standard made in both
// passes here. Sources written by hand from the standard's text live
// elsewhere under tests/ (tests/specsource, for issue 10), and
// resourcesync's conformance tests read the standard's own examples
// (resourcesync/testdata).
package sourcetest

import (
	"fmt"
	"slices"
)

// Layout selects the ResourceSync version whose document layout is served.
type Layout int

const (
	// Layout11 serves ResourceSync 1.1 (Z39.99-2017): /.well-known/resourcesync
	// is a Source Description pointing to the Capability List(s).
	Layout11 Layout = iota
	// Layout10 serves the 1.0 form: /.well-known/resourcesync is the
	// Capability List itself (or a Capability List Index for several sets),
	// documents carry rs:md modified= and rs:ln rel="resourcesync", and
	// Change List entries carry the change time as lastmod.
	Layout10
)

// String returns "1.1" or "1.0".
func (l Layout) String() string {
	switch l {
	case Layout11:
		return "1.1"
	case Layout10:
		return "1.0"
	}
	return fmt.Sprintf("Layout(%d)", int(l))
}

// ParseLayout reads "1.0" or "1.1".
func ParseLayout(s string) (Layout, error) {
	switch s {
	case "1.1":
		return Layout11, nil
	case "1.0":
		return Layout10, nil
	}
	return 0, fmt.Errorf("unknown ResourceSync layout %q (want 1.0 or 1.1)", s)
}

// Config describes the Source to generate.
type Config struct {
	// Addr is the listen address of the primary server; default "127.0.0.1:0".
	Addr string
	// Host, if set, is the host name the Source's URIs name instead of the
	// listen address (http://HOST:PORT/): one that resolves to it, so that
	// a client can reach it through an HTTP proxy (Go's client never
	// proxies requests to 127.0.0.1 or localhost).
	Host string
	// Base, if set, is the base URL the Source's URIs and documents name
	// ("http://127.0.0.1:8080/"), overriding Host: a reverse proxy in
	// front of the Source (a shared cache), which forwards to Addr().
	Base string
	// Resources is the number of generated resources, at paths like
	// /data/d017/r001723.txt, 100 per directory.
	Resources int
	// FanOut, if set, spreads the generated resources round-robin over
	// this many directories two levels deep, 100 to a parent
	// (/data/d001/s017/r001723.txt is resource 1723 of FanOut 200), as a
	// repository of many small records is: resource order, and so the
	// Resource Dump's (creation order), is then not the paths' order.
	FanOut int
	// MinSize and MaxSize bound the body sizes (deterministic per resource);
	// default 100..4000.
	MinSize, MaxSize int64
	// Seed selects the generated bodies, sizes and lastmods.
	Seed int64
	// PerList is the number of entries per Resource List; when a set has more
	// resources, a Resource List Index is published. Default 50,000.
	PerList int
	// DocCacheBytes bounds the rendered documents kept for repeated
	// requests (default 64 MiB, and only documents of up to 5,000 entries:
	// larger ones are streamed); when set, every document is kept, so a
	// benchmark that times the client, not the rendering, sets it to hold
	// every list.
	DocCacheBytes int
	// Layout selects the 1.1 or the 1.0 document layout.
	Layout Layout
	// Gzip serves Resource Lists, Indexes and Change Lists as .xml.gz.
	Gzip bool
	// OmitLength leaves rs:md length out of the lists.
	OmitLength bool
	// NoHEAD answers HEAD with 405.
	NoHEAD bool
	// IgnoreRange answers Range requests with 200 and the whole body.
	IgnoreRange bool
	// Awkward also publishes the awkward resources under /awkward/.
	Awkward bool
	// Mirror starts a second server serving the same bodies under /mirror/
	// and lists each resource with <rs:ln rel="duplicate" pri="1">.
	Mirror bool
	// Hashes lists the algorithms published per resource: "md5", "sha-1",
	// "sha-256". Default ["md5"].
	Hashes []string
	// ResourceSets is the number of Capability Lists; resources are split
	// between them. Default 1.
	ResourceSets int
	// Hub, when set, is a WebSub hub URL: each Capability List advertises a
	// change-notification channel there, and every change is published to
	// it as a ResourceSync Change Notification.
	Hub string
	// Dumps publishes a Resource Dump per set (/resourcedump.xml) of ZIP
	// packages (/dumps/partN.zip), each with a manifest.xml and the
	// bitstreams under /resources/...; built at Start (see dump.go).
	Dumps bool
	// PerDump is the number of resources per package; default 1000.
	PerDump int
	// DumpMethod is "mixed" (default: stored and deflated members
	// alternately), "stored", "deflate" or "zstd".
	DumpMethod string
	// DumpOnly (with Dumps) publishes no Resource List, and resource URIs
	// answer 404: the dumps are the only copy.
	DumpOnly bool
}

// Defaults of Config.
const (
	DefaultMinSize = 100
	DefaultMaxSize = 4000
	DefaultPerList = 50000
	DefaultAddr    = "127.0.0.1:0"
)

var knownHashes = []string{"md5", "sha-1", "sha-256"}

// withDefaults returns cfg with its zero fields filled in, or an error for
// a configuration that cannot be served.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.MinSize == 0 && cfg.MaxSize == 0 {
		cfg.MinSize, cfg.MaxSize = DefaultMinSize, DefaultMaxSize
	}
	if cfg.PerList == 0 {
		cfg.PerList = DefaultPerList
	}
	if len(cfg.Hashes) == 0 {
		cfg.Hashes = []string{"md5"}
	}
	if cfg.ResourceSets == 0 {
		cfg.ResourceSets = 1
	}
	switch {
	case cfg.Resources < 0:
		return cfg, fmt.Errorf("sourcetest: negative Resources %d", cfg.Resources)
	case cfg.MinSize < 0 || cfg.MaxSize < cfg.MinSize:
		return cfg, fmt.Errorf("sourcetest: bad size range %d..%d", cfg.MinSize, cfg.MaxSize)
	case cfg.PerList < 1:
		return cfg, fmt.Errorf("sourcetest: PerList %d < 1", cfg.PerList)
	case cfg.ResourceSets < 1:
		return cfg, fmt.Errorf("sourcetest: ResourceSets %d < 1", cfg.ResourceSets)
	case cfg.Layout != Layout11 && cfg.Layout != Layout10:
		return cfg, fmt.Errorf("sourcetest: unknown layout %d", cfg.Layout)
	}
	for _, h := range cfg.Hashes {
		if !slices.Contains(knownHashes, h) {
			return cfg, fmt.Errorf("sourcetest: unsupported hash algorithm %q", h)
		}
	}
	return cfg.withDumpDefaults()
}
