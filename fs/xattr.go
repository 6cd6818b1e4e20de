package fs

import (
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"rsfs/catalog"
)

// The extended attributes every file carries are user.<protocol>.<name>
// for these names, where protocol is the catalog's (catalog.Protocol:
// "resourcesync" for a ResourceSync Source), followed by the resource's own
// properties (catalog.Property) and its links (links.go) under the same
// prefix. fs does not know what a protocol's properties mean.
const (
	nameURI     = "uri"
	nameHash    = "hash"
	nameType    = "type"
	nameLastmod = "lastmod"
)

// The attributes of a ResourceSync catalog's files.
const (
	XattrURI     = "user." + catalog.DefaultProtocol + "." + nameURI
	XattrHash    = "user." + catalog.DefaultProtocol + "." + nameHash
	XattrType    = "user." + catalog.DefaultProtocol + "." + nameType
	XattrLastmod = "user." + catalog.DefaultProtocol + "." + nameLastmod
)

// noXattr is what getxattr answers for a name a node does not have: ENODATA
// for an absent user. attribute, ENOTSUP for any other namespace (security.,
// system., trusted.), which rsfs never carries. GNU ls stops asking a device
// for security.selinux and POSIX ACLs once it answers ENOTSUP; with ENODATA
// it asks for every file, two round trips to the daemon each. That is why
// the mount does not set go-fuse's IgnoreSecurityLabels: it would answer
// ENODATA for system.posix_acl_* itself, and the kernel passes a daemon's
// ENOTSUP for those names on to the caller.
func noXattr(attr string) syscall.Errno {
	if strings.HasPrefix(attr, "user.") {
		return syscall.ENODATA
	}
	return syscall.ENOTSUP
}

// xattr is one extended attribute: its full name and value.
type xattr struct{ name, value string }

// xattrs returns the resource's attributes with values, in listing order;
// a property named like a common attribute replaces it in place.
func xattrs(protocol string, r *catalog.Resource) []xattr {
	hashes := make([]string, len(r.Hashes))
	for i, h := range r.Hashes {
		hashes[i] = h.String()
	}
	lastmod := ""
	if !r.Lastmod.IsZero() {
		lastmod = r.Lastmod.UTC().Format(time.RFC3339Nano)
	}
	prefix := "user." + protocol + "."
	out := make([]xattr, 0, 4+len(r.Props))
	add := func(name, value string) {
		for i := range out {
			if out[i].name == prefix+name {
				out[i].value = value
				return
			}
		}
		out = append(out, xattr{prefix + name, value})
	}
	add(nameURI, r.URI)
	add(nameHash, strings.Join(hashes, " "))
	add(nameType, r.Type)
	add(nameLastmod, lastmod)
	for _, p := range r.Props {
		add(p.Name, p.Value)
	}
	for _, x := range linkXattrs(r.Links) {
		if len(prefix)+len(x.name) <= xattrNameMax {
			add(x.name, x.value)
		}
	}
	return slices.DeleteFunc(out, func(x xattr) bool { return x.value == "" })
}

// resource is what the Source published of file inode ref's version.
func (f *FS) resource(ref fileRef) (*catalog.Resource, bool) {
	if v, ok := f.cfg.Catalog.Version(ref.id); ok && v.Attr.Gen == ref.gen {
		return v.Resource, true
	}
	return f.keptResource(ref.nid)
}

// GetXAttr answers the control attributes every node has (XattrCached and
// the warm requests, ondisk.go), a file's attributes, and XattrStatus and
// XattrPoll on the root; directories have no other attribute.
func (f *FS) GetXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	if v, st, ok := f.controlXattr(h.NodeId, attr, len(dest) == 0); ok {
		if st != fuse.OK {
			return 0, st
		}
		return copyOut(dest, v)
	}
	if catalogID(h.NodeId).IsDir() {
		switch {
		case h.NodeId == fuse.FUSE_ROOT_ID && attr == XattrStatus && f.cfg.Status != nil:
			return copyOut(dest, string(f.status.get(f.cfg.Status, len(dest) == 0)))
		case h.NodeId == fuse.FUSE_ROOT_ID && attr == XattrPoll && f.cfg.Poll != nil:
			return f.pollXattr(cancel, h, dest)
		}
		return 0, fuse.Status(noXattr(attr))
	}
	r, ok := f.fileResource(h.NodeId)
	if !ok {
		return 0, fuse.ENOENT
	}
	for _, x := range xattrs(f.cfg.Catalog.Protocol(), r) {
		if x.name == attr {
			return copyOut(dest, x.value)
		}
	}
	return 0, fuse.Status(noXattr(attr))
}

func (f *FS) ListXAttr(cancel <-chan struct{}, h *fuse.InHeader, dest []byte) (uint32, fuse.Status) {
	if catalogID(h.NodeId).IsDir() {
		return 0, fuse.OK
	}
	r, ok := f.fileResource(h.NodeId)
	if !ok {
		return 0, fuse.ENOENT
	}
	var b strings.Builder
	for _, x := range xattrs(f.cfg.Catalog.Protocol(), r) {
		b.WriteString(x.name)
		b.WriteByte(0)
	}
	return copyOut(dest, b.String())
}

// fileResource is the resource of file inode nid's version.
func (f *FS) fileResource(nid uint64) (*catalog.Resource, bool) {
	ref, _, ok := f.file(nid)
	if !ok {
		return nil, false
	}
	return f.resource(ref)
}

// copyOut follows getxattr(2): an empty dest asks for the size; a short one
// is ERANGE.
func copyOut(dest []byte, v string) (uint32, fuse.Status) {
	if len(dest) == 0 {
		return uint32(len(v)), fuse.OK
	}
	if len(dest) < len(v) {
		return uint32(len(v)), fuse.ERANGE
	}
	return uint32(copy(dest, v)), fuse.OK
}
