// Package fs is the FUSE file system: go-fuse's raw protocol
// (fuse.RawFileSystem) answered from the catalog, with reads through the
// block cache from an origin it is handed, xattrs, and read-only answers
// to every mutating call. Metadata never waits on the network: lookup,
// readdir, getattr and getxattr answer from the catalog. rsfs keeps no tree
// of nodes: a kernel node ID is a catalog ID (nodes.go), and per inode the
// kernel holds rsfs keeps only a lookup count and the version it was given.
//
// # Mounting
//
// New makes the file system; it answers nothing until mounted.
// fuse.NewServer mounts it with the options of FS.MountOptions (read-only,
// MS_RDONLY, MS_NOSUID, MS_NODEV, 1 MiB reads). The kernel's first request
// is INIT, which go-fuse answers itself before it serves anything else:
// it tells the kernel the capabilities it wants of those offered (among
// them READDIRPLUS, always rather than _AUTO, and NO_OPEN_SUPPORT). Once
// INIT is answered go-fuse calls FS.Init with the server, and from then on
// the file system may send notifications. After fuse.Server.WaitMount the
// caller hands FS.Mounted the kernel's INIT (fuse.Server.KernelSettings):
// where the kernel opens files without asking, OPEN is answered ENOSYS
// (file.go).
//
// # Node IDs and reference counting
//
// The root is node 1, as FUSE requires. Every other node ID is the
// catalog ID in its low 32 bits and a version slot in the high ones (a
// file looked up at a new version while the kernel still holds the old
// gets a slot of its own: version.go). Each LOOKUP answered with an
// inode, and each READDIRPLUS entry answered in full, gives the kernel one
// more reference to it; FORGET (and BATCH_FORGET, which go-fuse splits)
// takes n of them back, and at none the node table's entry goes, with the
// version kept for it. So the table holds exactly the inodes the kernel
// holds, and a node ID may name another inode after its FORGET.
//
// A name that is not there is answered OK with node ID 0 and the entry
// timeout: the kernel keeps a negative entry, answers ENOENT from it and
// sends no LOOKUP for the name until the timeout passes or a notification
// drops it (dir.go). A READDIRPLUS entry with node ID 0 is a plain one,
// and counts no reference.
//
// # Kernel caches and notifications
//
// Entries, negative entries and attributes are kept by the kernel for
// Config.Timeout (an hour by default), file pages and directory listings
// until dropped. Every catalog change is told to the kernel instead
// (FS.Notify): EntryNotify for a name added or removed, DeleteNotify for
// an inode unlinked, InodeNotify for a listing or a file's pages. They are
// queued and sent from one goroutine of their own, never from inside a
// FUSE callback (the kernel holds a directory's lock while it waits for the
// answer to a LOOKUP in it, and an EntryNotify in that directory waits for
// the lock: a deadlock) and never under a lock. Before FS.Init they are
// dropped: the kernel holds nothing of the tree yet, and rsfs has no
// server to send them through. A notification about a node
// the kernel does not hold is not sent; ENOENT from the kernel means the
// same.
//
// # Prefetch
//
// What readers will ask for next is package prefetch's, not fs's: FS
// tells it of each read of a file of one block (version.go), asks it for
// the length a lookup needs (dir.go), and answers the warm xattrs with
// its jobs (warmxattr.go). Shutdown ends its background work.
//
// # Unmounting
//
// FS.Shutdown, called on SIGINT or SIGTERM before the unmount
// (mountutil.ServeUntilUnmounted), makes reads in flight and later opens
// and reads fail with EIO at once, so that the unmount never waits on a
// slow Source, and stops the notifications. The unmount itself ends
// go-fuse's serve loop. The kernel sends no FORGET for the inodes it held
// (they go with the connection), and nothing in the node table needs
// saving. A notification sent after an unmount the user made fails
// harmlessly (ENODEV or EBADF).
package fs
