package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	httppprof "net/http/pprof"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/spf13/cobra"

	"rsfs/cache"
	"rsfs/catalog"
	"rsfs/fetch"
	"rsfs/follow"
	"rsfs/fs"
	"rsfs/metrics"
	"rsfs/mountsrc"
	"rsfs/mountutil"
	"rsfs/notify"
	"rsfs/origin"
	"rsfs/prefetch"
	"rsfs/protocol"
	"rsfs/sdnotify"
	"rsfs/source"
	"rsfs/statedir"
	"rsfs/status"
	"rsfs/termui"
)

type mountFlags struct {
	sourceFlags
	metricsAddr   string
	metrics       *metrics.Server // listening when --metrics-addr is set
	foreground    bool
	allowNonEmpty bool
	allowOther    bool
	noOpen        bool
	uid, gid      int
	cacheSize     string
	blockSize     string
	readAhead     int
	logFile       string
	readyTimeout  time.Duration
	pollInterval  time.Duration
	learnLengths  bool
	cacheDir      string
	cacheMaxSize  string
	cacheTotalMax string
	verifyWhole   string
	cpuProfile    string
	pprofAddr     string
	memoryLimit   string
	notifyAddr    string
	notifyURL     string
	notifySub     *notify.Subscriber // listening when --notify-addr is set
	sizes         parsedSizes

	// verifyWholeSet: --verify-whole-below was given. Its default is
	// capped at a quarter of --cache-size; a value given is checked.
	verifyWholeSet bool
}

// parsedSizes are the size flags, parsed.
type parsedSizes struct{ cache, block, disk, cacheTotal, memoryLimit, verifyWhole int64 }

// parseSizes reads the size flags before anything starts, so that a bad
// one is a clear error even for a background mount.
func (mf *mountFlags) parseSizes() error {
	for _, f := range []struct {
		name, value string
		dst         *int64
	}{
		{"--cache-size", mf.cacheSize, &mf.sizes.cache},
		{"--block-size", mf.blockSize, &mf.sizes.block},
		{"--cache-max-size", mf.cacheMaxSize, &mf.sizes.disk},
		{"--cache-total-max", mf.cacheTotalMax, &mf.sizes.cacheTotal},
		{"--memory-limit", mf.memoryLimit, &mf.sizes.memoryLimit},
		{"--verify-whole-below", mf.verifyWhole, &mf.sizes.verifyWhole},
	} {
		if f.value == "" {
			continue
		}
		n, err := parseSize(f.value)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		*f.dst = n
	}
	return nil
}

func (c *cli) mountCmd() *cobra.Command {
	var mf mountFlags
	cmd := &cobra.Command{
		Use:   "mount URL DIR",
		Short: "Mount the Source at URL on DIR, read-only",
		Long: `mount discovers the Source at URL, reads its Resource Lists, and mounts the
tree on DIR. It returns once the tree is ready and the mount serves; the
file system keeps running in the background (see --foreground). Unmount with
'umount DIR' or 'fusermount3 -u DIR'.

A size is a number with an optional unit, K, M, G or T, with or without B
or iB, in either case; every unit is a power of 1024: 1G, 1GB, 1gb and 1GiB
are all 1,073,741,824 bytes. A duration has a unit: 500ms, 30s, 5m, 1h.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.runMount(cmd, &mf, args[0], args[1])
		},
	}
	mf.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&mf.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://HOST:PORT/metrics (default: off)")
	fl.BoolVarP(&mf.foreground, "foreground", "f", false, "stay attached: serve until unmounted or interrupted")
	fl.BoolVar(&mf.allowNonEmpty, "allow-non-empty", false, "mount over a directory that is not empty")
	fl.BoolVar(&mf.allowOther, "allow-other", false, "let other users see the mount (needs user_allow_other in /etc/fuse.conf unless root)")
	fl.BoolVar(&mf.noOpen, "no-open", false, "")
	_ = fl.MarkDeprecated("no-open", "files always open without a round trip now, and keep their version while open")
	fl.IntVar(&mf.uid, "uid", os.Getuid(), "owner of every file and directory")
	fl.IntVar(&mf.gid, "gid", os.Getgid(), "group of every file and directory")
	fl.StringVar(&mf.cacheSize, "cache-size", "256MiB", "memory for cached content blocks (at least 4 blocks)")
	fl.StringVar(&mf.blockSize, "block-size", "", "size of the aligned blocks fetched by Range: a power of two from 4KiB to 16MiB")
	// The default is the cache's; "" keeps it, and help shows it.
	fl.Lookup("block-size").DefValue = sizeString(cache.DefaultBlockSize)
	fl.IntVar(&mf.readAhead, "read-ahead", 0, "blocks fetched ahead of a sequential reader (default: the cache's)")
	fl.StringVar(&mf.cacheDir, "cache-dir", "", "where rsfs remembers Sources (catalog snapshots, disk cache of blocks): default $XDG_CACHE_HOME/rsfs; \"none\" to remember nothing")
	fl.StringVar(&mf.verifyWhole, "verify-whole-below", "16MiB", "files with a published hash up to this size are read and verified whole before their first byte is served; larger ones are streamed (at most --cache-size/4; 0: stream every file)")
	fl.StringVar(&mf.cacheMaxSize, "cache-max-size", "10GiB", "disk space for cached content blocks under --cache-dir; 0: no disk cache")
	fl.StringVar(&mf.cacheTotalMax, "cache-total-max", defaultCacheTotalMax, "disk space for all the state directories under --cache-dir together: at mount, the least recently used that no mount holds are removed to stay under it; 0: no limit")
	fl.StringVar(&mf.cpuProfile, "cpu-profile", "", "write a CPU profile of the mount to this file (for benchmarks)")
	_ = fl.MarkHidden("cpu-profile")
	fl.StringVar(&mf.memoryLimit, "memory-limit", "", "soft limit on the mount's memory (e.g. 600MiB): the Go GC works harder to stay under it (default: none)")
	fl.StringVar(&mf.pprofAddr, "pprof-addr", "", "serve net/http/pprof on this address (for profiling)")
	_ = fl.MarkHidden("pprof-addr")
	fl.StringVar(&mf.logFile, "log-file", "", "where the mount logs (default: a background mount to $XDG_CACHE_HOME/rsfs/logs/, in a file named after DIR as systemd-escape --path names it; a foreground one to stderr)")
	fl.DurationVar(&mf.readyTimeout, "ready-timeout", 30*time.Minute, "how long to wait for a background mount to be ready")
	fl.StringVar(&mf.notifyAddr, "notify-addr", "", "listen here (host:port) for pushed notifications from the hubs the Source advertises")
	fl.StringVar(&mf.notifyURL, "notify-url", "", "the URL hubs reach --notify-addr at (default http://ADDR)")
	fl.BoolVar(&mf.offline, "offline", false, "mount what was remembered of the Source (its snapshot and the disk cache) without asking it anything: files on disk read, others fail with EIO at once; no polls")
	fl.DurationVar(&mf.offlineWait, "offline-wait", 0, "how long a read waits for a Source that does not answer before it fails (default: one --timeout); once the Source has not answered for one --timeout the mount is offline, and a read that needs the network fails at once")
	fl.DurationVar(&mf.pollInterval, "poll-interval", time.Minute, "how often to poll the Change Lists (jittered by ±10%): 0 disables following, else at least 100ms")
	fl.BoolVar(&mf.learnLengths, "learn-lengths", true, "once the mount is ready, learn in the background (HEAD) the lengths the Resource Lists do not give; false: only when a process looks the file up")
	return cmd
}

func (c *cli) runMount(cmd *cobra.Command, mf *mountFlags, rawURL, dir string) error {
	if err := checkMountArgs(rawURL, dir); err != nil {
		return err
	}
	mf.verifyWholeSet = cmd.Flags().Changed("verify-whole-below")
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real // the mount point the kernel, status and hold name
	}
	if err := mf.validate(); err != nil {
		return err
	}
	if err := mountutil.Prepare(dir, mf.allowNonEmpty); err != nil {
		if errors.Is(err, mountutil.ErrNotEmpty) {
			return fmt.Errorf("%w (use --allow-non-empty to mount over it)", err)
		}
		return err
	}
	if err := precheck(mf, dir); err != nil {
		return err // before anything is downloaded
	}
	if !mf.foreground && !mountutil.InBackground() {
		args := append([]string{}, os.Args[1:]...)
		args = append(args, "--foreground")
		return mountutil.StartBackground(args, mf.readyTimeout)
	}
	// A background child stops loading if the parent waiting for it goes.
	stopWatch := mountutil.WatchParent()
	defer stopWatch()
	// A background mount logs to its file from the start; the terminal
	// keeps only the progress display, and the parent prints any error. A
	// foreground one logs to stderr, or to --log-file if given.
	term, out := os.Stderr, os.Stdout
	if mountutil.InBackground() {
		var err error
		if term, out, err = c.logs.Detach(mf.logFile, dir); err != nil {
			mountutil.ReportReady(err)
			// Its stderr is still the parent's, which prints err: say
			// nothing, or the terminal would show it twice.
			return exitWith(exitFailure, nil)
		}
	} else if mf.logFile != "" {
		if err := c.logs.ToFile(mf.logFile, false); err != nil {
			return err
		}
	}
	// Until the mount serves, its warnings are said on the terminal too,
	// unless the terminal is where the log goes.
	echo := &termui.Echo{}
	slog.SetDefault(slog.New(echo.Handler(slog.Default().Handler())))
	if file, _ := c.logs.Toward(); file || term != os.Stderr {
		echo.Start(term)
	}
	// Credentials in the URL are never sent (fetch strips them), so they
	// are not kept either: not in logs, status, metrics or the state key.
	if stripped, host, had := origin.StripUserinfo(rawURL); had {
		slog.Warn("user information in the URL is never sent; pass credentials with --header or --bearer-token-env", "host", host)
		rawURL = stripped
	}
	// Every line says which mount wrote it.
	slog.SetDefault(slog.Default().With("source", rawURL, "mount", dir))
	c.logs.FailWith("source", rawURL, "mount", dir) // the final error's, too
	if len(c.envFixed) > 0 {
		slog.Info("environment completed, as mount(8) runs a helper without PATH or the user's HOME", "set", c.envFixed)
	}
	// From here until the process ends, SIGINT and SIGTERM are held: one
	// during loading stops it, one after the mount is made unmounts; held
	// before the state directory is taken, so that a mount stopped while it
	// loads removes it. SIGHUP reopens the log file (logrotate) in both
	// modes, and never unmounts: systemd runs a mount in the foreground, and
	// reload or a logrotate script sends it SIGHUP.
	signals := mountutil.CatchSignals(cmd.Context(), c.logs.Reopen)
	cmd.SetContext(signals.Context())
	failed := func(err error, lock *statedir.Lock) error { return c.mountFailed(err, lock, echo) }
	lock, err := lockState(mf, rawURL, dir)
	if err != nil {
		return failed(err, nil)
	}
	mounted := false
	defer func() {
		if mounted {
			lock.Release()
		}
	}()
	if mf.cpuProfile != "" {
		stopProfile, err := startCPUProfile(mf.cpuProfile)
		if err != nil {
			return failed(err, lock)
		}
		defer stopProfile()
	}
	if err := mf.listenMetrics(); err != nil {
		return failed(err, lock)
	}
	if err := mf.listenNotify(); err != nil {
		return failed(err, lock)
	}
	if mf.sizes.memoryLimit > 0 {
		debug.SetMemoryLimit(mf.sizes.memoryLimit)
	}
	if mf.pprofAddr != "" {
		go servePprof(mf.pprofAddr)
	}
	c.systemd.Send("STATUS=loading " + rawURL)
	m, err := c.serve(cmd, mf, rawURL, dir, term, echo)
	echo.Stop()
	if err == nil {
		stopWatch() // the parent exits once it reads that the mount serves
		slog.Info("mounted", "version", readBuildInfo().Version, "resources", m.src.Catalog().Len(), "origin", m.src.Origin(), "pid", os.Getpid())
		if logFile, _ := c.logs.Toward(); logFile || term != os.Stderr {
			// The terminal is not the log, which has the line above.
			fmt.Fprintln(out, mountedLine(m.src.Catalog().Len(), rawURL, dir, c.logs.File()))
		}
	}
	if term != os.Stderr {
		term.Close()
	}
	if out != os.Stdout {
		out.Close()
	}
	if err != nil {
		return failed(err, lock)
	}
	mountutil.ReportReady(nil)
	mounted = true
	c.systemd.Ready(fmt.Sprintf("serving %d resources from %s", m.src.Catalog().Len(), rawURL))
	m.unmounted = lock.Closing
	m.run(cmd.Context(), mf, dir, signals)
	return nil
}

// mountFailed ends a mount that failed with err: the log file, if the
// logs go to one, says so in its own format; the state directory is let go
// (lock.Abandon: one that remembers no Source is removed); then a waiting
// parent is told, so that nothing is left once it exits.
func (c *cli) mountFailed(err error, lock *statedir.Lock, echo *termui.Echo) error {
	echo.Stop() // the error is said once, by PrintError or the parent
	if file, _ := c.logs.Toward(); file {
		slog.Error("mount failed", "err", oneLine(err))
	}
	if lock != nil {
		lock.Abandon()
	}
	mountutil.ReportReady(err)
	return err
}

// run follows the Source and serves until the file system is unmounted,
// then waits for the follower's loop, which saves a fresh catalog before
// its first poll and saves again as it ends, and unsubscribes.
func (m *mountedFS) run(ctx context.Context, mf *mountFlags, dir string, signals *mountutil.Signals) {
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
		if mf.learnLengths {
			m.learnLengths(ctx)
		}
	}()
	stopSystemd := m.systemd.Follow(ctx, func() (time.Time, string) {
		p := follower.Polling()
		result := "ok"
		if p.LastPollErr != "" {
			result = "failed: " + p.LastPollErr
		}
		return p.LastPoll, fmt.Sprintf("following: %d resources, %d changes applied; last poll %s %s",
			m.src.Catalog().Len(), follower.Applied(), p.LastPoll.UTC().Format(time.TimeOnly), result)
	})
	sub, err := startPush(fetch.Probe(ctx), mf, follower)
	if err != nil {
		slog.Error("push notifications", "err", err)
	}
	m.serveUntilUnmounted(dir, signals, cancel)
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
func (m *mountedFS) learnLengths(ctx context.Context) {
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
func (m *mountedFS) serveUntilUnmounted(dir string, signals *mountutil.Signals, cancel context.CancelFunc) {
	mountutil.ServeUntilUnmounted(dir, m.server, signals, func() { m.systemd.Stopping(); cancel(); m.fsys.Shutdown() }, 5*time.Second, slog.Default())
	m.systemd.Stopping()
	slog.Info("unmounted", "dir", dir)
	if m.unmounted != nil {
		m.unmounted()
	}
	cancel()
}

// mountedFS is a file system being served, of whichever protocol.
type mountedFS struct {
	src    *mountsrc.Source
	fsys   *fs.FS
	server *fuse.Server
	blocks *cache.Cache
	// systemd is told that it serves, follows and stops.
	systemd *sdnotify.Notifier
	// unmounted, if set, is called once the file system is unmounted,
	// before the state is saved.
	unmounted func()
}

// serve opens the Source (package mountsrc: discovered and loaded, or
// remembered), mounts it on dir, and catches up before it reports ready.
// Each part is built after the parts it uses: the cache, the Source (its
// catalog loaded or restored), the status, the file system over them, the
// follower (which tells the file system of the changes it applies, and
// lets bad versions be tried again after each poll), the catching up, the
// mount.
func (c *cli) serve(cmd *cobra.Command, mf *mountFlags, rawURL, dir string, term *os.File, echo *termui.Echo) (*mountedFS, error) {
	stateDir, err := mf.stateDir(rawURL)
	if err != nil {
		return nil, err
	}
	client, err := mf.client(rawURL)
	if err != nil {
		return nil, err
	}
	blocks, err := newCache(mf, stateDir, client.InFlight)
	if err != nil {
		return nil, err
	}
	holdFile := mountutil.HoldPath(dir)
	if err := mountutil.PrepareHoldDir(holdFile); err != nil {
		slog.Warn("rsfs hold will not reach this mount", "hold_file", holdFile, "err", err)
	}
	prog := newProgress(term, echo)
	if file, _ := c.logs.Toward(); c.logs.JSON() && !file && term == os.Stderr {
		prog = newProgress(nil, echo) // stderr is the JSON log, which has each retry
	}
	client.OnRetry(prog.retry) // until loaded: a Source that does not answer is said, not silent
	// Loading is what the user waits for: its requests go through their
	// retries, saying what they wait for, whatever the offline state.
	src, err := mountsrc.Open(fetch.Patient(cmd.Context()), mountsrc.Options{
		Dir: stateDir, URL: rawURL, Source: mf.sourceOptions(client), Offline: mf.offline,
		Progress: func(pr source.Progress) {
			c.systemd.Loading(fmt.Sprintf("loading: %d lists read, %d resources", pr.Lists, pr.Resources))
			prog.update(pr)
		},
	})
	client.OnRetry(nil)
	prog.done()
	if errors.Is(err, mountsrc.ErrNothingRemembered) {
		err = fmt.Errorf("--offline: %w", err)
	}
	if err != nil {
		blocks.Close()
		return nil, err
	}
	cache.PaceGC(blocks.MemoryBytes)
	readErrors, reach := &status.Events{}, &status.Reachability{}
	if err := src.Unreachable(); err != nil {
		reach.Failed(time.Now(), err) // rsfs status says since when
	}
	stat, mets := newMountReport(mf, rawURL, dir, holdFile, c.logs.File(), src, blocks, readErrors, reach)
	f := fs.New(fs.Config{
		Status:      stat.JSON,
		Poll:        pollNow(stat, src),
		ReadErrors:  readErrors,
		ExplainRead: explainRead,
		Catalog:     src.Catalog(),
		Cache:       blocks,
		Fetcher:     src.Fetcher,
		Length:      headLength(src.Client()),
		Batch:       src.Batch(),
		Network:     networkOf(client),
		UID:         uint32(mf.uid),
		GID:         uint32(mf.gid),
	})
	stat.OnDisk = f.OnDisk
	stat.Offline = func() status.Offline {
		st := client.Offline()
		return status.Offline{Offline: st.Offline, Since: st.Since, Hang: st.Hang, Err: st.Err, Timeout: mf.timeout, Forced: mf.offline}
	}
	// The file system drops effects until it is mounted: the kernel holds
	// nothing of the tree before (fs/notify.go).
	src.Follow(f.Notify, follow.Options{Interval: mf.pollInterval, Held: func() bool { return mountutil.Held(holdFile) },
		AfterPoll: func() {
			blocks.RetryBad() // versions that failed verification are tried again
			if fl := src.Follower(); fl != nil {
				reach.Observe(fl.Polling()) // the first of failed polls in a row is since when
			}
		}})
	mf.metrics.Serve(cmd.Context(), mets)
	if err := src.CatchUp(fetch.Patient(cmd.Context())); err != nil {
		slog.Warn("catching up with the Source", "err", err)
		reach.Failed(time.Now(), err) // rsfs status says since when
	}
	// Parsing the lists left garbage of about their size, and the runtime
	// gives freed heap back to the OS only slowly: return it before serving,
	// so that an idle mount holds about its catalog (DESIGN §11).
	start := time.Now()
	debug.FreeOSMemory()
	slog.Debug("returned the loading's garbage to the OS", "took", time.Since(start))
	server, err := f.Mount(dir, src.Origin(), mf.allowOther, mf.metrics.WrapFUSE)
	if err != nil {
		blocks.Close()
		return nil, fmt.Errorf("mount %s: %w", dir, err)
	}
	return &mountedFS{src: src, fsys: f, server: server, blocks: blocks, systemd: &c.systemd}, nil
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
func newCache(mf *mountFlags, stateDir string, inFlight func() int) (*cache.Cache, error) {
	// Fills ahead of readers (read-ahead) run 32 at once: on small files the
	// round trip, not the bandwidth, is the cost; warming runs as many as
	// the Source's host is worth (inFlight: more over HTTP/2).
	verifyWhole := mf.sizes.verifyWhole
	if verifyWhole == 0 {
		verifyWhole = -1 // the cache reads 0 as "the default"
	}
	cfg := cache.Config{MaxBytes: mf.sizes.cache, BlockSize: int(mf.sizes.block), ReadAhead: mf.readAhead, PrefetchConcurrency: 32, WarmConcurrency: inFlight, VerifyWholeBelow: verifyWhole}
	if stateDir != "" && mf.sizes.disk > 0 {
		cfg.DiskDir, cfg.DiskMaxBytes = statedir.BlocksDir(stateDir), mf.sizes.disk
	}
	c, err := cache.NewWithDisk(cfg)
	if err != nil {
		return nil, fmt.Errorf("disk cache: %w", err)
	}
	return c, nil
}

// listenMetrics binds --metrics-addr before anything is mounted, so that
// an address in use is a clear error.
func (mf *mountFlags) listenMetrics() error {
	if mf.metricsAddr == "" {
		return nil
	}
	srv, err := metrics.Listen(mf.metricsAddr)
	if err != nil {
		return fmt.Errorf("--metrics-addr: %w", err)
	}
	mf.metrics = srv
	return nil
}

// pusher is a follower that also applies pushed notifications: a
// ResourceSync Source's WebSub channels (changes.Follower). Atom-PMH names
// no channel.
type pusher interface {
	Subscribe(ctx context.Context, sub *notify.Subscriber) (int, error)
	RunPush(ctx context.Context, notes <-chan notify.Notification)
}

// listenNotify starts the callback server of --notify-addr before
// anything is mounted, so that an address that cannot be bound is a clear
// error, as for --metrics-addr.
func (mf *mountFlags) listenNotify() error {
	if mf.notifyAddr == "" {
		return nil
	}
	sub, err := notify.Start(notify.Options{Addr: mf.notifyAddr, PublicURL: mf.notifyURL})
	if err != nil {
		return fmt.Errorf("--notify-addr: %w", err)
	}
	mf.notifySub = sub
	return nil
}

// startPush subscribes to the Source's notification channels when
// --notify-addr is set, and applies what they push.
func startPush(ctx context.Context, mf *mountFlags, f protocol.Follower) (*notify.Subscriber, error) {
	sub := mf.notifySub
	if sub == nil {
		return nil, nil
	}
	p, ok := f.(pusher)
	if !ok {
		slog.Warn("--notify-addr: this protocol has no notification channels; polling only")
		return sub, nil
	}
	go p.RunPush(ctx, sub.Notifications())
	n, err := p.Subscribe(ctx, sub)
	if n == 0 && err == nil {
		slog.Warn("--notify-addr: the Source advertises no notification channel")
	}
	return sub, err
}

// servePprof serves net/http/pprof's handlers on addr, on a mux of its
// own. (Importing net/http/pprof still adds them to http.DefaultServeMux in
// its init; no server of rsfs serves that mux.)
func servePprof(addr string) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", httppprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", httppprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", httppprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", httppprof.Trace)
	slog.Warn("pprof server", "err", http.ListenAndServe(addr, mux))
}

func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
