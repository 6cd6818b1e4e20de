package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// The floor (issue 42): what a FUSE file system costs when it has nothing
// to fetch, check or cache. memFS serves a directory tree loaded into
// memory at mount, through go-fuse's raw API with rsfs's mount options
// and its choices of operations (OPEN and FLUSH answered ENOSYS, so the
// kernel stops sending them; every directory read a READDIRPLUS that
// answers every entry in full; long timeouts). A READ is a slice of the
// file's bytes. Whatever rsfs spends above it on the same walk is the
// network, the verification and the cache; -peer-clients memfs mounts it.

// memFSArg is the bench's first argument when it runs as a memFS mount:
//
//	bench memfs-serve SRC DIR
const memFSArg = "memfs-serve"

// memTimeout is the entry and attribute timeout (nothing ever changes).
const memTimeout = time.Hour

type memNode struct {
	attr     fuse.Attr
	data     []byte            // a file's bytes
	children map[string]uint64 // a directory's entries, by name
	names    []string          // and in name order
}

// memFS is a read-only tree in memory; node ID i is nodes[i] (1 is the root).
type memFS struct {
	fuse.RawFileSystem
	nodes   []*memNode
	skipped uint64 // the node of the file not loaded (streamFS's), or 0
}

// loadMemFS reads every directory and regular file under src but skip,
// whose node gets its size and no bytes.
func loadMemFS(src, skip string) (*memFS, error) {
	m := &memFS{RawFileSystem: fuse.NewDefaultRawFileSystem(), nodes: []*memNode{nil}}
	ids := map[string]uint64{}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		n := &memNode{}
		id := uint64(len(m.nodes))
		n.attr = fuse.Attr{Ino: id, Nlink: 1, Blksize: 4096}
		if d.IsDir() {
			n.attr.Mode = syscall.S_IFDIR | 0o555
			n.children = map[string]uint64{}
		} else if d.Type().IsRegular() {
			if err := n.load(p, p == skip); err != nil {
				return err
			}
			if p == skip {
				m.skipped = id
			}
		} else {
			return nil
		}
		m.nodes = append(m.nodes, n)
		ids[p] = id
		if p != src {
			parent := m.nodes[ids[filepath.Dir(p)]]
			parent.children[d.Name()] = id
			parent.names = append(parent.names, d.Name()) // WalkDir goes in name order
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", src, err)
	}
	return m, nil
}

// load sets a regular file's attributes and, unless sizeOnly, its bytes.
func (n *memNode) load(p string, sizeOnly bool) error {
	n.attr.Mode = syscall.S_IFREG | 0o444
	if sizeOnly {
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		n.attr.Size = uint64(st.Size())
	} else {
		var err error
		if n.data, err = os.ReadFile(p); err != nil {
			return err
		}
		n.attr.Size = uint64(len(n.data))
	}
	n.attr.Blocks = (n.attr.Size + 511) / 512
	return nil
}

// serveMemFS mounts src's tree on dir and serves it until it is unmounted.
func serveMemFS(src, dir string) error {
	m, err := loadMemFS(src, "")
	if err != nil {
		return err
	}
	return serveRaw(m, dir)
}

// serveRaw mounts fs on dir with rsfs's mount options and serves it until
// it is unmounted.
func serveRaw(fs fuse.RawFileSystem, dir string) error {
	server, err := mountRaw(fs, dir)
	if err != nil {
		return err
	}
	server.Serve()
	return nil
}

// mountRaw mounts fs on dir; its Serve answers the kernel.
func mountRaw(fs fuse.RawFileSystem, dir string) (*fuse.Server, error) {
	// The load's garbage is collected before the mount is ready, so that
	// no collection of it runs during a timed read (the floor's CPU).
	runtime.GC()
	opts := &fuse.MountOptions{
		FsName: "memfs", Name: "memfs", Options: []string{"ro", "default_permissions"},
		DirectMount: true, DirectMountFlags: syscall.MS_RDONLY | syscall.MS_NOSUID | syscall.MS_NODEV,
		MaxWrite: 1 << 20, MaxReadAhead: 1 << 20, MaxBackground: 64, DisableSplice: true,
	}
	server, err := fuse.NewServer(fs, dir, opts)
	if err != nil {
		return nil, fmt.Errorf("mount %s: %w", dir, err)
	}
	return server, nil
}

// memFSClient is the peer client that mounts the floor over the served tree.
func memFSClient(www string) peerClient {
	return fuseHelperClient(memFSName, memFSArg, www)
}

const memFSName = "floor: memory FUSE fs"

// node returns node id (the root, the first loaded, is FUSE_ROOT_ID).
func (m *memFS) node(id uint64) *memNode {
	if id > 0 && id < uint64(len(m.nodes)) {
		return m.nodes[id]
	}
	return nil
}

func (m *memFS) entry(id uint64, out *fuse.EntryOut) {
	out.NodeId = id
	out.Attr = m.nodes[id].attr
	out.SetEntryTimeout(memTimeout)
	out.SetAttrTimeout(memTimeout)
}

func (m *memFS) Lookup(_ <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	d := m.node(h.NodeId)
	if d == nil || d.children == nil {
		return fuse.ENOENT
	}
	id, ok := d.children[name]
	if !ok {
		return fuse.ENOENT
	}
	m.entry(id, out)
	return fuse.OK
}

func (m *memFS) GetAttr(_ <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	n := m.node(in.NodeId)
	if n == nil {
		return fuse.ENOENT
	}
	out.Attr = n.attr
	out.SetTimeout(memTimeout)
	return fuse.OK
}

func (m *memFS) Open(<-chan struct{}, *fuse.OpenIn, *fuse.OpenOut) fuse.Status { return fuse.ENOSYS }
func (m *memFS) Flush(<-chan struct{}, *fuse.FlushIn) fuse.Status              { return fuse.ENOSYS }

func (m *memFS) Read(_ <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	n := m.node(in.NodeId)
	if n == nil || n.children != nil {
		return nil, fuse.EIO
	}
	off := min(int(in.Offset), len(n.data))
	return fuse.ReadResultData(n.data[off:min(off+len(buf), len(n.data))]), fuse.OK
}

func (m *memFS) OpenDir(_ <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if n := m.node(in.NodeId); n == nil || n.children == nil {
		return fuse.ENOTDIR
	}
	out.OpenFlags = fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE
	return fuse.OK
}

func (m *memFS) ReleaseDir(*fuse.ReleaseIn) {}

func (m *memFS) ReadDir(_ <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return m.readDir(in, out, false)
}

func (m *memFS) ReadDirPlus(_ <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return m.readDir(in, out, true)
}

func (m *memFS) readDir(in *fuse.ReadIn, out *fuse.DirEntryList, plus bool) fuse.Status {
	d := m.node(in.NodeId)
	if d == nil || d.children == nil {
		return fuse.ENOTDIR
	}
	for i := int(in.Offset); i < len(d.names); i++ {
		id := d.children[d.names[i]]
		de := fuse.DirEntry{Name: d.names[i], Mode: m.nodes[id].attr.Mode &^ 0o7777, Ino: id, Off: uint64(i + 1)}
		if !plus {
			if !out.AddDirEntry(de) {
				break
			}
			continue
		}
		e := out.AddDirLookupEntry(de)
		if e == nil {
			break
		}
		m.entry(id, e)
	}
	return fuse.OK
}

func (m *memFS) StatFs(_ <-chan struct{}, _ *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	out.Bsize, out.Frsize, out.NameLen = 4096, 4096, 255
	out.Files = uint64(len(m.nodes) - 1)
	return fuse.OK
}
