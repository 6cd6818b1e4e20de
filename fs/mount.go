package fs

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/hanwen/go-fuse/v2/fuse"

	"rsfs/mountutil"
)

// Mount mounts f on dir with rsfs's options (MountOptions: name is the
// mount's source, allowOther lets other users see it) and serves it until
// it is unmounted; it returns once the kernel has the mount, and tells f
// what the kernel can do (Mounted). wrap, if not nil, wraps the FUSE
// operations (metrics.WrapFUSE measures them). fusermount3 says why it
// failed on stderr, which go-fuse gives it: that reason goes into the
// error.
func (f *FS) Mount(dir, name string, allowOther bool, wrap func(fuse.RawFileSystem) fuse.RawFileSystem) (*fuse.Server, error) {
	var raw fuse.RawFileSystem = f
	if wrap != nil {
		raw = wrap(raw)
	}
	var server *fuse.Server
	said, err := mountutil.CaptureStderr(func() error {
		var err error
		server, err = fuse.NewServer(raw, dir, f.MountOptions(name, allowOther))
		return err
	})
	if err != nil {
		if said != "" {
			return nil, fmt.Errorf("%s (%s)", strings.ReplaceAll(said, "\n", "; "), strings.TrimSpace(err.Error()))
		}
		return nil, err
	}
	if said != "" {
		slog.Warn("fusermount3", "said", said)
	}
	go server.Serve()
	if err := server.WaitMount(); err != nil {
		return nil, err
	}
	f.Mounted(server.KernelSettings())
	return server, nil
}
