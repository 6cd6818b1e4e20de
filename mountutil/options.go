package mountutil

import "strings"

// GenericOption reports whether o is a generic mount(8) option a helper may be
// passed. rsfs accepts and ignores them: it is always read-only, and the
// kernel mount is made nodev,nosuid by FUSE whatever they say. The ones
// mount(8) and mount.fuse3 act on themselves (noauto, user, _netdev,
// nofail, x-systemd.*, comment=) are accepted too, for `rsfs URL DIR -o
// ...` typed by hand with an fstab line's options.
func GenericOption(o string) bool {
	switch o {
	case "ro", "rw", "defaults",
		"dev", "nodev", "suid", "nosuid", "exec", "noexec",
		"atime", "noatime", "relatime", "strictatime", "diratime", "nodiratime",
		"lazytime", "nolazytime", "sync", "async", "dirsync",
		"auto", "noauto", "user", "nouser", "users", "owner", "group",
		"_netdev", "nofail":
		return true
	}
	return strings.HasPrefix(o, "x-") || strings.HasPrefix(o, "comment=")
}
