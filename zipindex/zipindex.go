// Package zipindex reads single members out of a ZIP package (a ResourceSync
// Resource Dump or Change Dump) behind an io.ReaderAt, normally a remote file
// read by HTTP Range requests, without reading the whole package.
//
// Open reads the central directory in one suffix read (two or three when the
// directory is larger than the tail read or a ZIP64 record lies before it).
// Package.Reader streams any byte range of a member: stored members are read
// directly; deflated members are inflated, and large ones keep checkpoints
// (block boundary + 32 KiB window, the zran.c technique) so that a read deep
// inside resumes near its offset instead of inflating from the start; zstd
// members are decoded from their start. Lengths are always checked, CRC-32 on
// every pass over a whole member, and structural lies are refused with
// ErrHostile rather than answered with wrong bytes.
package zipindex

import (
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Compression methods supported by Reader.
const (
	MethodStored  uint16 = 0
	MethodDeflate uint16 = 8
	MethodZstd    uint16 = 93
)

// Defaults used where an Options field is zero.
const (
	DefaultMaxRatio    = 1000
	DefaultMaxMembers  = 10_000_000
	DefaultMaxDirBytes = 512 << 20
)

// Options bound what Open accepts.
type Options struct {
	// MaxRatio is the largest uncompressed/compressed size ratio accepted for
	// a member (zip bombs). Default 1000.
	MaxRatio int64
	// MaxMembers bounds the number of directory entries. Default 10,000,000.
	MaxMembers int
	// MaxDirBytes bounds the central directory's size. Default 512 MiB.
	MaxDirBytes int64
	// Checkpoints holds the inflate checkpoints of large deflated members;
	// nil means a process-wide cache of DefaultCheckpointBytes.
	Checkpoints *CheckpointCache
}

func (o Options) withDefaults() Options {
	if o.MaxRatio <= 0 {
		o.MaxRatio = DefaultMaxRatio
	}
	if o.MaxMembers <= 0 {
		o.MaxMembers = DefaultMaxMembers
	}
	if o.MaxDirBytes <= 0 {
		o.MaxDirBytes = DefaultMaxDirBytes
	}
	if o.Checkpoints == nil {
		o.Checkpoints = defaultCheckpoints
	}
	return o
}

// Member is one central directory entry.
type Member struct {
	// Name is the member's path in the package as stored (normally without
	// a leading "/").
	Name           string
	Method         uint16
	Flags          uint16 // general purpose bit flags; bit 3: data descriptor
	CompressedSize int64
	Size           int64 // uncompressed
	CRC32          uint32
	HeaderOffset   int64 // of the local file header
	Modified       time.Time
}

// hasDataDescriptor reports flag bit 3: the local header's CRC and sizes are
// zero and follow the data instead.
func (m *Member) hasDataDescriptor() bool { return m.Flags&0x8 != 0 }

// Package is an opened ZIP package. It is safe for concurrent use.
type Package struct {
	// Name identifies the package in errors, normally its URL.
	Name string
	// Size is the package's size in bytes.
	Size int64
	// Members are the directory entries in directory order.
	Members []Member

	r      io.ReaderAt
	opts   Options
	id     uint64
	byName map[string]int
	limits []int64 // per member: where the next header (or the directory) starts

	mu      sync.Mutex
	dataOff map[int]int64 // learnt from local headers

	multiFailures atomic.Int64 // failed multi-range requests (ReadMembers)
}

// Lookup finds a member by its path, with or without a leading "/".
func (p *Package) Lookup(name string) (*Member, bool) {
	i, ok := p.byName[strings.TrimPrefix(name, "/")]
	if !ok {
		return nil, false
	}
	return &p.Members[i], true
}

// index returns m's position in Members; m must come from p.
func (p *Package) index(m *Member) (int, bool) {
	i, ok := p.byName[strings.TrimPrefix(m.Name, "/")]
	return i, ok && p.Members[i].HeaderOffset == m.HeaderOffset
}

// Close drops the package's inflate checkpoints from the cache. The
// package stays usable.
func (p *Package) Close() {
	p.opts.Checkpoints.forget(p.id)
}
