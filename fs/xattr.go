package fs

import (
	"context"
	"strings"
	"syscall"
	"time"

	"rsfs/catalog"
)

// The extended attributes every file carries.
const (
	XattrURI     = "user.resourcesync.uri"
	XattrHash    = "user.resourcesync.hash"
	XattrType    = "user.resourcesync.type"
	XattrLastmod = "user.resourcesync.lastmod"
)

var xattrNames = []string{XattrURI, XattrHash, XattrType, XattrLastmod}

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

// xattrs returns the resource's attributes; empty values are absent.
func xattrs(r *catalog.Resource) map[string]string {
	hashes := make([]string, len(r.Hashes))
	for i, h := range r.Hashes {
		hashes[i] = h.String()
	}
	lastmod := ""
	if !r.Lastmod.IsZero() {
		lastmod = r.Lastmod.UTC().Format(time.RFC3339Nano)
	}
	return map[string]string{
		XattrURI:     r.URI,
		XattrHash:    strings.Join(hashes, " "),
		XattrType:    r.Type,
		XattrLastmod: lastmod,
	}
}

func (n *fileNode) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	r, ok := n.fsys.cfg.Catalog.Resource(n.id)
	if !ok {
		return 0, syscall.ENOENT
	}
	v, ok := xattrs(r)[attr]
	if !ok || v == "" {
		return 0, noXattr(attr)
	}
	return copyOut(dest, v)
}

func (n *fileNode) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	r, ok := n.fsys.cfg.Catalog.Resource(n.id)
	if !ok {
		return 0, syscall.ENOENT
	}
	vals := xattrs(r)
	var b strings.Builder
	for _, name := range xattrNames {
		if vals[name] != "" {
			b.WriteString(name)
			b.WriteByte(0)
		}
	}
	return copyOut(dest, b.String())
}

// copyOut follows getxattr(2): an empty dest asks for the size; a short one
// is ERANGE.
func copyOut(dest []byte, v string) (uint32, syscall.Errno) {
	if len(dest) == 0 {
		return uint32(len(v)), 0
	}
	if len(dest) < len(v) {
		return uint32(len(v)), syscall.ERANGE
	}
	return uint32(copy(dest, v)), 0
}
