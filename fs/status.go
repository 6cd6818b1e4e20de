package fs

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"rsfs/cache"
)

// XattrStatus is the virtual extended attribute on the mount's root that
// answers `rsfs status`: the mount's state as JSON (Config.Status). It is
// not listed, so copying the root's attributes (rsync -X, getfattr -d)
// does not copy it.
const XattrStatus = "user.rsfs.status"

// readFailed counts a failed read and logs it once: a content that
// disagreed with its published length or hash was already logged by the
// cache, with the reason.
func (f *FS) readFailed(uri, path string, off int64, err error) {
	cause, fix := err.Error(), ""
	if f.cfg.ExplainRead != nil {
		cause, fix = f.cfg.ExplainRead(uri, err)
	}
	line := fmt.Sprintf("%s: %s: %s", path, uri, cause)
	if fix != "" {
		line += " (fix: " + fix + ")"
	}
	f.readErrors.Add(line)
	if errors.Is(err, cache.ErrIntegrity) {
		return
	}
	attrs := []any{"path", path, "uri", uri, "offset", off, "err", cause}
	if fix != "" {
		attrs = append(attrs, "fix", fix)
	}
	f.log.Error("read failed", attrs...)
}

// statusCache keeps the status rendered for a size query (getxattr with
// no buffer) for the read that follows it, so that both agree; any other
// read renders it afresh.
type statusCache struct {
	mu   sync.Mutex
	at   time.Time
	data []byte
}

func (c *statusCache) get(render func() []byte, sizeQuery bool) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sizeQuery {
		c.data, c.at = render(), time.Now()
		return c.data
	}
	data := c.data
	if data == nil || time.Since(c.at) > time.Second {
		data = render()
	}
	c.data = nil
	return data
}
