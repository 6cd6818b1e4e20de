// Package mountrun assembles a mount and runs it: the block cache, the
// Source (package mountsrc: discovered and loaded, or remembered), the
// status and metrics, the file system over them, the follower, the
// catching up and the FUSE mount (Start); then the serving, following and
// learning of lengths until the file system is unmounted (Mount.Run).
// cmd/rsfs fills a Config from its flags; nothing here names a flag.
package mountrun

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"rsfs/cache"
	"rsfs/catalog"
	"rsfs/fetch"
	"rsfs/follow"
	"rsfs/fs"
	"rsfs/metrics"
	"rsfs/mountsrc"
	"rsfs/mountutil"
	"rsfs/notify"
	"rsfs/prefetch"
	"rsfs/protocol"
	"rsfs/sdnotify"
	"rsfs/source"
	"rsfs/statedir"
	"rsfs/status"
	"rsfs/termui"
)

// Config is what a mount is made of, as cmd/rsfs reads it from its flags.
type Config struct {
	URL, Dir string // the Source, stripped of its userinfo; the mount point, absolute
	StateDir string // the Source's state directory; "" remembers nothing
	LogFile  string // the log file the status names, if the logs go to one
	Client   *fetch.Client
	Source   source.Options
	Offline  bool          // mount what was remembered without asking the Source anything
	Timeout  time.Duration // the client's timeout, which the status says
	// StatusHints are the flags the status names where one would help.
	StatusHints status.Hints

	CacheBytes       int64 // memory for cached blocks
	BlockSize        int64 // 0: the cache's default
	ReadAhead        int
	DiskBytes        int64 // the disk cache under StateDir; 0: none
	VerifyWholeBelow int64 // 0: stream every file

	UID, GID     uint32
	AllowOther   bool
	PollInterval time.Duration
	LearnLengths bool // learn in the background the lengths the lists did not give

	// Term shows the loading's progress (nil: nothing); Echo says the
	// log's warnings above it.
	Term *os.File
	Echo *termui.Echo

	Systemd     *sdnotify.Notifier
	Metrics     *metrics.Server // nil unless metrics are served
	ExplainRead func(uri string, err error) (cause, fix string)
	// Notify, if set, is subscribed to the Source's notification channels
	// once the mount serves, and what they push is applied; NotifyName is
	// how the user named it, which its warnings start with.
	Notify     *notify.Subscriber
	NotifyName string

	MemoryLimit int64  // a soft limit on the process's memory (debug.SetMemoryLimit); 0: none
	PprofAddr   string // serve net/http/pprof on this address (ServePprof); "": not
}

// Mount is a file system being served, of whichever protocol.
type Mount struct {
	cfg    Config
	src    *mountsrc.Source
	fsys   *fs.FS
	server *fuse.Server
	blocks *cache.Cache
}

// Source is the Source the mount serves.
func (m *Mount) Source() *mountsrc.Source { return m.src }

// Start opens the Source (package mountsrc: discovered and loaded, or
// remembered), mounts it on cfg.Dir, and catches up before it reports
// ready. Each part is built after the parts it uses: the cache, the Source
// (its catalog loaded or restored), the status, the file system over them,
// the follower (which tells the file system of the changes it applies, and
// lets bad versions be tried again after each poll), the catching up, the
// mount. ctx bounds the loading and the metrics server.
func Start(ctx context.Context, cfg Config) (*Mount, error) {
	if cfg.MemoryLimit > 0 {
		debug.SetMemoryLimit(cfg.MemoryLimit)
	}
	if cfg.PprofAddr != "" {
		go ServePprof(cfg.PprofAddr)
	}
	client := cfg.Client
	blocks, err := newCache(cfg, client.InFlight)
	if err != nil {
		return nil, err
	}
	holdFile := mountutil.HoldPath(cfg.Dir)
	if err := mountutil.PrepareHoldDir(holdFile); err != nil {
		slog.Warn("rsfs hold will not reach this mount", "hold_file", holdFile, "err", err)
	}
	prog := newProgress(cfg.Term, cfg.Echo)
	client.OnRetry(prog.retry) // until loaded: a Source that does not answer is said, not silent
	// Loading is what the user waits for: its requests go through their
	// retries, saying what they wait for, whatever the offline state.
	src, err := mountsrc.Open(fetch.Patient(ctx), mountsrc.Options{
		Dir: cfg.StateDir, URL: cfg.URL, Source: cfg.Source, Offline: cfg.Offline,
		Progress: func(pr source.Progress) {
			cfg.Systemd.Loading(fmt.Sprintf("loading: %d lists read, %d resources", pr.Lists, pr.Resources))
			prog.update(pr)
		},
	})
	client.OnRetry(nil)
	prog.done()
	if err != nil {
		blocks.Close()
		return nil, err
	}
	cache.PaceGC(blocks)
	readErrors, reach := &status.Events{}, &status.Reachability{}
	if err := src.Unreachable(); err != nil {
		reach.Failed(time.Now(), err) // rsfs status says since when
	}
	stat, mets := newReport(cfg, holdFile, src, blocks, readErrors, reach)
	f := fs.New(fs.Config{
		Status:      stat.JSON,
		Poll:        pollNow(stat, src),
		ReadErrors:  readErrors,
		ExplainRead: cfg.ExplainRead,
		Catalog:     src.Catalog(),
		Cache:       blocks,
		Fetcher:     src.Fetcher,
		Length:      headLength(src.Client()),
		Batch:       src.Batch(),
		Network:     networkOf(client),
		UID:         cfg.UID,
		GID:         cfg.GID,
	})
	stat.OnDisk = f.OnDisk
	mets.PageStores = f.PageStores
	stat.Offline = func() status.Offline {
		st := client.Offline()
		return status.Offline{Offline: st.Offline, Since: st.Since, Hang: st.Hang, Err: st.Err, Timeout: cfg.Timeout, Forced: cfg.Offline}
	}
	// The file system drops effects until it is mounted: the kernel holds
	// nothing of the tree before (fs/notify.go).
	src.Follow(f.Notify, follow.Options{Interval: cfg.PollInterval, Held: func() bool { return mountutil.Held(holdFile) },
		AfterPoll: func() {
			blocks.RetryBad() // versions that failed verification are tried again
			if fl := src.Follower(); fl != nil {
				reach.Observe(fl.Polling()) // the first of failed polls in a row is since when
			}
		}})
	cfg.Metrics.Serve(ctx, mets)
	if err := src.CatchUp(fetch.Patient(ctx)); err != nil {
		slog.Warn("catching up with the Source", "err", err)
		reach.Failed(time.Now(), err) // rsfs status says since when
	}
	// Parsing the lists left garbage of about their size, and the runtime
	// gives freed heap back to the OS only slowly: return it before serving,
	// so that an idle mount holds about its catalog (DESIGN §11).
	start := time.Now()
	debug.FreeOSMemory()
	slog.Debug("returned the loading's garbage to the OS", "took", time.Since(start))
	server, err := f.Mount(cfg.Dir, src.Origin(), cfg.AllowOther, cfg.Metrics.WrapFUSE)
	if err != nil {
		blocks.Close()
		return nil, fmt.Errorf("mount %s: %w", cfg.Dir, err)
	}
	return &Mount{cfg: cfg, src: src, fsys: f, server: server, blocks: blocks}, nil
}

// Run follows the Source and serves until the file system is unmounted,
// then waits for the follower's loop, which saves a fresh catalog before
// its first poll and saves again as it ends, and unsubscribes. unmounted,
// if set, is called once the file system is unmounted, before the state
// is saved.
func (m *Mount) Run(ctx context.Context, signals *mountutil.Signals, unmounted func()) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	follower := m.src.Follower()
	following := make(chan struct{})
	go func() {
		defer close(following)
		m.src.Run(fetch.Probe(ctx)) // a fresh catalog, caught up, is saved before the loop's first poll; polls probe an offline Source
	}()
	learning := make(chan struct{})
	go func() {
		defer close(learning)
		if m.cfg.LearnLengths {
			m.learnLengths(ctx)
		}
	}()
	stopSystemd := m.cfg.Systemd.Follow(ctx, func() (time.Time, string) {
		p := follower.Polling()
		result := "ok"
		if p.LastPollErr != "" {
			result = "failed: " + p.LastPollErr
		}
		return p.LastPoll, fmt.Sprintf("following: %d resources, %d changes applied; last poll %s %s",
			m.src.Catalog().Len(), follower.Applied(), p.LastPoll.UTC().Format(time.TimeOnly), result)
	})
	sub, err := m.startPush(fetch.Probe(ctx), follower)
	if err != nil {
		slog.Error("push notifications", "err", err)
	}
	m.serveUntilUnmounted(signals, cancel, unmounted)
	stopSystemd()
	<-following // every save of the loop is done, a fresh catalog's first one included
	<-learning
	m.blocks.Close()
	if sub != nil {
		closeCtx, done := context.WithTimeout(context.Background(), 10*time.Second)
		defer done()
		if err := sub.Close(closeCtx); err != nil {
			slog.Warn("unsubscribing", "err", err)
		}
	}
}

// learnLengths learns in the background the lengths the lists did not
// give (fs.LearnLengths), through the Source's per-origin limits.
func (m *Mount) learnLengths(ctx context.Context) {
	n := m.src.Catalog().Unsized()
	if n == 0 {
		return
	}
	slog.Info("learning in the background the lengths the lists did not give", "files", n)
	start := time.Now()
	learned, failed := m.fsys.LearnLengths(ctx, fetch.HeadParallel)
	slog.Info("learned in the background the lengths the lists did not give", "learned", learned, "failed", failed,
		"took", time.Since(start))
}

// serveUntilUnmounted serves until the file system is unmounted, then
// stops following (cancel).
func (m *Mount) serveUntilUnmounted(signals *mountutil.Signals, cancel context.CancelFunc, unmounted func()) {
	dir := m.cfg.Dir
	mountutil.ServeUntilUnmounted(dir, m.server, signals, func() { m.cfg.Systemd.Stopping(); cancel(); m.fsys.Shutdown() }, 5*time.Second, slog.Default())
	m.cfg.Systemd.Stopping()
	slog.Info("unmounted", "dir", dir)
	if unmounted != nil {
		unmounted()
	}
	cancel()
}

// headLength learns a resource's length by HEAD (or a one-byte range when
// HEAD gives none), through client's per-origin limits: for the files
// whose list gave no length, when a lookup needs it.
func headLength(client *fetch.Client) func(context.Context, *catalog.Resource) (int64, error) {
	return func(ctx context.Context, r *catalog.Resource) (int64, error) {
		meta, err := client.Head(ctx, r.URI)
		if err != nil {
			return -1, err
		}
		return meta.Length, nil
	}
}

// networkOf is the round trip and bandwidth client measured to the host
// most of its requests went to, which size the file system's warm window.
func networkOf(client *fetch.Client) prefetch.NetworkFunc {
	return func() (time.Duration, float64) {
		n := client.Busiest()
		return n.RTT, n.Bandwidth
	}
}

// newCache builds the block cache: memory, over a disk cache in the state
// directory unless remembering is off.
func newCache(c Config, inFlight func() int) (*cache.Cache, error) {
	// Fills ahead of readers (read-ahead) run 32 at once: on small files the
	// round trip, not the bandwidth, is the cost; warming runs as many as
	// the Source's host is worth (inFlight: more over HTTP/2).
	verifyWhole := c.VerifyWholeBelow
	if verifyWhole == 0 {
		verifyWhole = -1 // the cache reads 0 as "the default"
	}
	cfg := cache.Config{MaxBytes: c.CacheBytes, BlockSize: int(c.BlockSize), ReadAhead: c.ReadAhead, PrefetchConcurrency: 32, WarmConcurrency: inFlight, VerifyWholeBelow: verifyWhole}
	if c.StateDir != "" && c.DiskBytes > 0 {
		cfg.DiskDir, cfg.DiskMaxBytes = statedir.BlocksDir(c.StateDir), c.DiskBytes
	}
	blocks, err := cache.NewWithDisk(cfg)
	if err != nil {
		return nil, fmt.Errorf("disk cache: %w", err)
	}
	return blocks, nil
}

// pusher is a follower that also applies pushed notifications: a
// ResourceSync Source's WebSub channels (changes.Follower). Atom-PMH names
// no channel.
type pusher interface {
	Subscribe(ctx context.Context, sub *notify.Subscriber) (int, error)
	RunPush(ctx context.Context, notes <-chan notify.Notification)
}

// startPush subscribes to the Source's notification channels when
// cfg.Notify is set, and applies what they push.
func (m *Mount) startPush(ctx context.Context, f protocol.Follower) (*notify.Subscriber, error) {
	sub := m.cfg.Notify
	if sub == nil {
		return nil, nil
	}
	p, ok := f.(pusher)
	if !ok {
		slog.Warn(m.cfg.NotifyName + ": this protocol has no notification channels; polling only")
		return sub, nil
	}
	go p.RunPush(ctx, sub.Notifications())
	n, err := p.Subscribe(ctx, sub)
	if n == 0 && err == nil {
		slog.Warn(m.cfg.NotifyName + ": the Source advertises no notification channel")
	}
	return sub, err
}
