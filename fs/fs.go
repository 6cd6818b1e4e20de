// Package fs is the go-fuse adapter: a lazy tree of nodes over the catalog,
// reads through the block cache from an origin it is handed, xattrs, and
// read-only answers to every mutating call. Metadata never waits on the
// network: lookup, readdir, getattr and getxattr answer from the catalog.
package fs

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"rsfs/cache"
	"rsfs/catalog"
	"rsfs/status"
)

// FetcherFunc returns where a resource's bytes come from. The protocol
// provides it (package copies reads a URI, its mirrors and dump members),
// so fs never learns which protocol a Source speaks.
type FetcherFunc func(r *catalog.Resource) cache.Fetcher

// Config configures the file system.
type Config struct {
	Catalog *catalog.Catalog
	Cache   *cache.Cache
	Fetcher FetcherFunc
	// Batch, if set, reads several small resources at once where the
	// Source can (adjacent dump members); it returns nil for the others.
	Batch func(ctx context.Context, rs []*catalog.Resource) [][]byte
	UID   uint32
	GID   uint32
	// Timeout is how long the kernel may keep entries and attributes; long,
	// because changes are pushed to the kernel by notification.
	Timeout time.Duration
	Logger  *slog.Logger
	// Status, if set, renders the mount's state for XattrStatus.
	Status func() []byte
}

// DefaultTimeout is the kernel entry and attribute timeout.
const DefaultTimeout = time.Hour

// FS is a mounted Source.
type FS struct {
	cfg Config
	log *slog.Logger
	// closing is cancelled by Shutdown: reads in flight fail at once.
	closing  context.Context
	shutdown context.CancelFunc
	root     *dirNode
	notes    notifier
	warm     warmer
	versions versions
	// noOpen: the kernel opens files without asking (Mounted).
	noOpen atomic.Bool
	// readErrors are the reads that failed (EIO), for Status.
	readErrors status.Events
	status     statusCache
	statters   statters
	inodes     inodes
}

// New returns a file system over cfg's catalog.
func New(cfg Config) *FS {
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	closing, shutdown := context.WithCancel(context.Background())
	f := &FS{cfg: cfg, log: log, closing: closing, shutdown: shutdown}
	f.inodes.init()
	f.root = &dirNode{fsys: f, id: catalog.RootID}
	f.notes.cond = sync.NewCond(&f.notes.mu)
	go f.runNotifier()
	return f
}

// Shutdown makes reads in flight, and any later open or read, fail with
// EIO, so an unmount never waits on a slow Source. It also stops kernel
// notifications.
func (f *FS) Shutdown() {
	f.shutdown()
	f.stopNotifier()
}

// opContext is ctx, also cancelled by Shutdown.
func (f *FS) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(f.closing, cancel)
	return ctx, func() { stop(); cancel() }
}

// Mounted tells the file system what the kernel it is mounted in can do;
// call it once gofs.Mount has returned. Where the kernel opens files
// without asking (FUSE_NO_OPEN_SUPPORT), OPEN is answered ENOSYS and an
// open costs no round trip; until then, and in older kernels, files open
// with no handle (file.go).
func (f *FS) Mounted(kernel *fuse.InitIn) {
	f.noOpen.Store(kernel != nil && kernel.Flags64()&fuse.CAP_NO_OPEN_SUPPORT != 0)
}

// Root returns the root node, for gofs.Mount.
func (f *FS) Root() gofs.InodeEmbedder { return f.root }

// MountOptions returns the options rsfs mounts with: read-only, long
// kernel caches, 1 MiB reads.
func (f *FS) MountOptions(name string, allowOther bool) *gofs.Options {
	t := f.cfg.Timeout
	opts := &gofs.Options{
		EntryTimeout:    &t,
		AttrTimeout:     &t,
		NegativeTimeout: &t,
		UID:             f.cfg.UID,
		GID:             f.cfg.GID,
	}
	opts.MountOptions = fuse.MountOptions{
		AllowOther:       allowOther,
		FsName:           name,
		Name:             "rsfs",
		Options:          []string{"ro", "default_permissions"},
		DirectMount:      true,
		DirectMountFlags: syscall.MS_RDONLY | syscall.MS_NOSUID | syscall.MS_NODEV,
		MaxWrite:         1 << 20,
		MaxReadAhead:     1 << 20,
		MaxBackground:    64,
		// rsfs answers reads from memory (fuse.ReadResultData). go-fuse's
		// splice path only helps replies backed by a file descriptor; for
		// bytes in memory it writes the header into a pipe, gives up, and
		// drains the pipe again: three wasted system calls on every READ.
		DisableSplice:        true,
		IgnoreSecurityLabels: false, // rsfs answers the ACL names itself: ENOTSUP (xattr.go)
		// READDIRPLUS answers files in full only to a program that stats
		// what it lists (plus.go): a plain find creates no inode per file.
		ExtraCapabilities: fuse.CAP_READDIRPLUS_AUTO,
	}
	return opts
}

// fillAttr turns catalog attributes into what the kernel sees.
func (f *FS) fillAttr(a catalog.Attr, out *fuse.Attr) {
	out.Ino = a.Ino
	out.Size = uint64(a.Size)
	out.Blocks = (uint64(a.Size) + 511) / 512
	out.Blksize = 4096
	sec, nsec := uint64(a.Mtime.Unix()), uint32(a.Mtime.Nanosecond())
	if a.Mtime.IsZero() {
		sec, nsec = 0, 0
	}
	out.Mtime, out.Mtimensec = sec, nsec
	out.Ctime, out.Ctimensec = sec, nsec
	out.Atime, out.Atimensec = sec, nsec
	out.Uid, out.Gid = f.cfg.UID, f.cfg.GID
	out.Nlink = a.Nlink
	if a.Dir {
		out.Mode = syscall.S_IFDIR | 0o555
	} else {
		out.Mode = syscall.S_IFREG | 0o444
	}
}

func (f *FS) fillEntry(a catalog.Attr, out *fuse.EntryOut) {
	f.fillAttr(a, &out.Attr)
	out.SetEntryTimeout(f.cfg.Timeout)
	out.SetAttrTimeout(f.cfg.Timeout)
}

func stableAttr(a catalog.Attr) gofs.StableAttr {
	mode := uint32(syscall.S_IFREG)
	if a.Dir {
		mode = syscall.S_IFDIR
	}
	return gofs.StableAttr{Mode: mode, Ino: a.Ino, Gen: a.Gen}
}

// newNode returns the node embedder for a catalog node.
func (f *FS) newNode(id catalog.NodeID, a catalog.Attr) gofs.InodeEmbedder {
	if a.Dir {
		return &dirNode{fsys: f, id: id}
	}
	return newFileNode(f, id, a)
}
