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
// cache, with the reason. The kernel retries a failed page read at once,
// in the same read(2): a failure alike of the same task on the same file
// within retryWindow is that retry, not counted again (the log folds it
// too: slogdedup's repeated=1).
func (f *FS) readFailed(pid uint32, nid uint64, uri, path string, off int64, err error) {
	cause, fix := err.Error(), ""
	if f.cfg.ExplainRead != nil {
		cause, fix = f.cfg.ExplainRead(uri, err)
	}
	line := fmt.Sprintf("%s: %s: %s", path, uri, cause)
	if fix != "" {
		line += " (fix: " + fix + ")"
	}
	if !f.retries.retry(readFailure{pid: pid, nid: nid, line: line}, time.Now()) {
		f.readErrors.Add(line)
	}
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

// retryWindow is how soon after a failed read the kernel's retry of it
// comes: at once, in the same read(2).
const retryWindow = time.Second

// readFailure is what tells a failed read from another: the task that
// read, the file, and how it failed.
type readFailure struct {
	pid  uint32
	nid  uint64
	line string
}

// readRetries remembers the last failed read, to tell the kernel's retry
// of it from a read of its own.
type readRetries struct {
	mu   sync.Mutex
	last readFailure
	at   time.Time
}

// retry reports whether fail, at now, is the kernel's retry of the last
// failed read, and remembers it as the last otherwise.
func (r *readRetries) retry(fail readFailure, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if fail == r.last && now.Sub(r.at) < retryWindow {
		return true // r.at stays the read's: the window does not slide
	}
	r.last, r.at = fail, now
	return false
}
