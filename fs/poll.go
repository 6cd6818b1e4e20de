package fs

import (
	"context"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// XattrPoll is the virtual extended attribute on the mount's root that
// answers `rsfs poll`: reading it polls the Source now, waits for the poll
// and answers what it did, as JSON (Config.Poll). Only the user the mount
// runs as and root may: a poll costs the Source requests. It is not
// listed.
const XattrPoll = "user.rsfs.poll"

// pollKeep is how long a poll's answer to a size query (getxattr with no
// buffer) waits for the read that follows it.
const pollKeep = 10 * time.Second

// notifiedWait bounds how long a poll's answer waits for the kernel to be
// told of what it applied.
const notifiedWait = 5 * time.Second

// pollXattr answers XattrPoll: a size query polls and keeps the answer
// for the read that follows it, so that both are one poll; a read takes
// the answer kept, or polls.
func (f *FS) pollXattr(cancel <-chan struct{}, h *fuse.InHeader, dest []byte) (uint32, fuse.Status) {
	if uid := h.Caller.Uid; uid != 0 && int(uid) != os.Getuid() {
		return 0, fuse.Status(syscall.EPERM)
	}
	sizeQuery := len(dest) == 0
	data, ok := f.polled.take(sizeQuery)
	if !ok {
		ctx, stop := f.opContext(ctxOf(cancel, h.Caller))
		defer stop()
		data = f.cfg.Poll(ctx)
		if ctx.Err() != nil {
			return 0, fuse.EINTR
		}
		// What the poll applied is queued for the kernel: answer once it
		// is sent, so that a read right after `rsfs poll` finds the new
		// version, not the inode of the old one. Bounded, as a kernel
		// that is slow to take notifications delays the answer only.
		wait, done := context.WithTimeout(ctx, notifiedWait)
		f.notified(wait)
		done()
		if sizeQuery {
			f.polled.keep(data)
		}
	}
	return copyOut(dest, string(data))
}

// pollResult is the answer of a poll that a size query asked for, kept
// for the read that follows.
type pollResult struct {
	mu   sync.Mutex
	at   time.Time
	data []byte
}

// take returns the answer kept, once, unless sizeQuery (which polls).
func (p *pollResult) take(sizeQuery bool) ([]byte, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if sizeQuery || p.data == nil || time.Since(p.at) > pollKeep {
		return nil, false
	}
	data := p.data
	p.data = nil
	return data, true
}

func (p *pollResult) keep(data []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.data, p.at = data, time.Now()
}
