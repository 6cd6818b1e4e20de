package fs

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"rsfs/cache"
	"rsfs/catalog"
	"rsfs/prefetch"
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
	// Batch, Length and Network are package prefetch's (prefetch.Config):
	// Batch, if set, reads several small resources at once where the
	// Source can (adjacent dump members); Length, if set, learns the
	// length of a resource whose list gave none, when a lookup needs it;
	// Network, if set, sizes the warm window.
	Batch   func(ctx context.Context, rs []*catalog.Resource) [][]byte
	Length  func(ctx context.Context, r *catalog.Resource) (int64, error)
	Network prefetch.NetworkFunc
	UID     uint32
	GID     uint32
	// Timeout is how long the kernel may keep entries and attributes; long,
	// because changes are pushed to the kernel by notification.
	Timeout time.Duration
	Logger  *slog.Logger
	// Status, if set, renders the mount's state for XattrStatus.
	Status func() []byte
	// Poll, if set, polls the Source now, waits for the poll and renders
	// what it did, for XattrPoll (`rsfs poll`).
	Poll func(ctx context.Context) []byte
	// ReadErrors, if set, records the reads that failed (EIO), for the
	// status that reads them; else the file system keeps its own.
	ReadErrors *status.Events
	// ExplainRead, if set, says why a read of uri failed with err in a
	// few words (the cause, without the URLs every layer added) and what
	// would fix it ("" when nothing the user can do would), for the log
	// and the status; else the error is shown whole.
	ExplainRead func(uri string, err error) (cause, fix string)
}

// DefaultTimeout is the kernel entry and attribute timeout.
const DefaultTimeout = time.Hour

// FS is a mounted Source: the fuse.RawFileSystem go-fuse serves.
type FS struct {
	base // what FS does not answer (readonly.go)
	cfg  Config
	log  *slog.Logger
	// closing is cancelled by Shutdown: reads in flight fail at once.
	closing  context.Context
	shutdown context.CancelFunc
	server   atomic.Pointer[fuse.Server] // set by Init
	nodes    nodeTable
	dirs     dirHandles
	notes    notifier
	// pre fetches ahead of the readers: windows, warm jobs, lengths.
	pre        *prefetch.Prefetcher
	onDiskMemo onDiskMemo
	versions   versions
	// noOpen: the kernel opens files without asking (Mounted).
	noOpen atomic.Bool
	// readErrors are the reads that failed (EIO), for Status
	// (Config.ReadErrors).
	readErrors *status.Events
	// pageStores counts the warmed files handed to the kernel's page
	// cache (notify.go).
	pageStores    atomic.Int64
	unheld        unheldStores // warmed files to store once listed (unheld.go)
	retries       readRetries
	status        statusCache
	polled        pollResult
	statters      boundedSet[uint32]         // processes that stat what they list (plus.go)
	plainListings boundedSet[catalog.NodeID] // directories whose cached listing answered a file plain
	inodes        inodes
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
	f := &FS{base: base{fuse.NewDefaultRawFileSystem()}, cfg: cfg, log: log, closing: closing, shutdown: shutdown,
		readErrors: cfg.ReadErrors}
	if f.readErrors == nil {
		f.readErrors = &status.Events{}
	}
	f.pre = prefetch.New(prefetch.Config{Catalog: cfg.Catalog, Cache: cfg.Cache, Fetcher: cfg.Fetcher,
		Batch: cfg.Batch, Length: cfg.Length, Network: cfg.Network, Warmed: f.warmed, Logger: log}, closing)
	f.statters.limit, f.plainListings.limit = maxStatters, maxPlainListings
	f.inodes.init()
	f.nodes.init()
	f.notes.cond = sync.NewCond(&f.notes.mu)
	go f.runNotifier()
	return f
}

// PageStores is how many warmed files were handed to the kernel's page
// cache, to be read there with no READ.
func (f *FS) PageStores() int64 { return f.pageStores.Load() }

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
// call it once the mount has been made (fuse.Server.KernelSettings). Where the kernel opens files
// without asking (FUSE_NO_OPEN_SUPPORT), OPEN is answered ENOSYS and an
// open costs no round trip; until then, and in older kernels, files open
// with no handle (file.go).
func (f *FS) Mounted(kernel *fuse.InitIn) {
	f.noOpen.Store(kernel != nil && kernel.Flags64()&fuse.CAP_NO_OPEN_SUPPORT != 0)
}

// Init keeps the server, for kernel notifications (notify.go).
func (f *FS) Init(server *fuse.Server) { f.server.Store(server) }

func (f *FS) String() string { return "rsfs" }

// MountOptions returns the options rsfs mounts with: read-only, long
// kernel caches (Config.Timeout), 1 MiB reads.
func (f *FS) MountOptions(name string, allowOther bool) *fuse.MountOptions {
	return &fuse.MountOptions{
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
		// Every directory read is a READDIRPLUS (go-fuse asks for
		// CAP_READDIRPLUS, not _AUTO): it answers directories in full, and
		// files only to a program that stats what it lists (plus.go), so a
		// plain find creates no inode per file and no LOOKUP per directory.
	}
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

// fillEntry answers a lookup of node nid, the version a of a catalog node.
func (f *FS) fillEntry(nid uint64, a catalog.Attr, out *fuse.EntryOut) {
	out.NodeId = nid
	out.Generation = a.Gen
	f.fillAttr(a, &out.Attr)
	out.SetEntryTimeout(f.cfg.Timeout)
	out.SetAttrTimeout(f.cfg.Timeout)
}

// ctxOf is the context of a request: its caller, cancelled when the kernel
// interrupts it.
func ctxOf(cancel <-chan struct{}, caller fuse.Caller) context.Context {
	return &fuse.Context{Caller: caller, Cancel: cancel}
}
