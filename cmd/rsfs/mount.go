package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"rsfs/cache"
	"rsfs/metrics"
	"rsfs/mountrun"
	"rsfs/mountsrc"
	"rsfs/mountutil"
	"rsfs/notify"
	"rsfs/origin"
	"rsfs/report"
	"rsfs/statedir"
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
		n, err := report.ParseSize(f.value)
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
	fl.Lookup("block-size").DefValue = report.SizeArg(cache.DefaultBlockSize)
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
		stopProfile, err := mountrun.StartCPUProfile(mf.cpuProfile)
		if err != nil {
			return failed(fmt.Errorf("--cpu-profile: %w", err), lock)
		}
		defer stopProfile()
	}
	if err := mf.listenMetrics(); err != nil {
		return failed(err, lock)
	}
	if err := mf.listenNotify(); err != nil {
		return failed(err, lock)
	}
	c.systemd.Send("STATUS=loading " + rawURL)
	m, err := c.serve(cmd, mf, rawURL, dir, term, echo)
	echo.Stop()
	if err == nil {
		stopWatch() // the parent exits once it reads that the mount serves
		slog.Info("mounted", "version", readBuildInfo().Version, "resources", m.Source().Catalog().Len(), "origin", m.Source().Origin(), "pid", os.Getpid())
		if logFile, _ := c.logs.Toward(); logFile || term != os.Stderr {
			// The terminal is not the log, which has the line above.
			fmt.Fprintln(out, termui.MountedLine(m.Source().Catalog().Len(), rawURL, dir, c.logs.File()))
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
	c.systemd.Ready(fmt.Sprintf("serving %d resources from %s", m.Source().Catalog().Len(), rawURL))
	m.Run(cmd.Context(), signals, lock.Closing)
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

// serve opens the Source and mounts it on dir (mountrun.Start), from a
// mountrun.Config that mf fills.
func (c *cli) serve(cmd *cobra.Command, mf *mountFlags, rawURL, dir string, term *os.File, echo *termui.Echo) (*mountrun.Mount, error) {
	stateDir, err := mf.stateDir(rawURL)
	if err != nil {
		return nil, err
	}
	client, err := mf.client(rawURL)
	if err != nil {
		return nil, err
	}
	if file, _ := c.logs.Toward(); c.logs.JSON() && !file && term == os.Stderr {
		term = nil // stderr is the JSON log, which has each retry
	}
	m, err := mountrun.Start(cmd.Context(), mountrun.Config{
		URL: rawURL, Dir: dir, StateDir: stateDir, LogFile: c.logs.File(),
		Client: client, Source: mf.sourceOptions(client), Offline: mf.offline, Timeout: mf.timeout, StatusHints: statusHints(),
		CacheBytes: mf.sizes.cache, BlockSize: mf.sizes.block, ReadAhead: mf.readAhead,
		DiskBytes: mf.sizes.disk, VerifyWholeBelow: mf.sizes.verifyWhole,
		UID: uint32(mf.uid), GID: uint32(mf.gid), AllowOther: mf.allowOther,
		PollInterval: mf.pollInterval, LearnLengths: mf.learnLengths,
		Term: term, Echo: echo, Systemd: &c.systemd, Metrics: mf.metrics, ExplainRead: explainRead,
		Notify: mf.notifySub, NotifyName: "--notify-addr",
		MemoryLimit: mf.sizes.memoryLimit, PprofAddr: mf.pprofAddr,
	})
	if errors.Is(err, mountsrc.ErrNothingRemembered) {
		err = fmt.Errorf("--offline: %w", err)
	}
	return m, err
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
