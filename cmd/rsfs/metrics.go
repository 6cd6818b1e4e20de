package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/pflag"

	"rsfs/fs"
	"rsfs/metrics"
)

// systemFlags are the mount flags of the system integration.
type systemFlags struct {
	metricsAddr string
	metrics     *mountMetrics // listening when --metrics-addr is set
}

func (sf *systemFlags) registerSystem(fl *pflag.FlagSet) {
	fl.StringVar(&sf.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://HOST:PORT/metrics (default: off)")
}

// mountMetrics is a mount's Prometheus registry and the listener it is
// served on.
type mountMetrics struct {
	reg *prometheus.Registry
	ln  net.Listener
	srv *http.Server
}

// listenMetrics binds --metrics-addr before anything is mounted, so that
// an address in use is a clear error.
func (sf *systemFlags) listenMetrics() error {
	if sf.metricsAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", sf.metricsAddr)
	if err != nil {
		return fmt.Errorf("--metrics-addr: %w", err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	sf.metrics = &mountMetrics{reg: reg, ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	return nil
}

// mountFS mounts fsys on dir as gofs.Mount does, with its FUSE operations
// measured when metrics are on, and tells fsys what the kernel can do.
func (sf *systemFlags) mountFS(dir string, fsys *fs.FS, name string, allowOther bool) (*fuse.Server, error) {
	server, err := sf.serveFS(dir, fsys.Root(), fsys.MountOptions(name, allowOther))
	if err != nil {
		return nil, err
	}
	fsys.Mounted(server.KernelSettings())
	return server, nil
}

func (sf *systemFlags) serveFS(dir string, root gofs.InodeEmbedder, opts *gofs.Options) (*fuse.Server, error) {
	if sf.metrics == nil {
		return gofs.Mount(dir, root, opts)
	}
	raw := metrics.WrapFUSE(gofs.NewNodeFS(root, opts), sf.metrics.reg)
	server, err := fuse.NewServer(raw, dir, &opts.MountOptions)
	if err != nil {
		return nil, err
	}
	go server.Serve()
	if err := server.WaitMount(); err != nil {
		return nil, err
	}
	return server, nil
}

// serveMetrics registers the mount's collector and serves until ctx ends.
func (sf *systemFlags) serveMetrics(ctx context.Context, r *reporter) {
	m := sf.metrics
	if m == nil {
		return
	}
	m.reg.MustRegister(&collector{r: r})
	go func() {
		if err := m.srv.Serve(m.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("metrics server", "err", err)
		}
	}()
	context.AfterFunc(ctx, func() { _ = m.srv.Close() })
	slog.Info("serving metrics", "url", "http://"+m.ln.Addr().String()+"/metrics")
}

// collector reads the mount's counters at each scrape.
type collector struct{ r *reporter }

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	descRequests     = desc("rsfs_http_requests_total", "HTTP requests sent, by origin, kind (get, range, head) and status (0: no response).", "origin", "kind", "status")
	descBytes        = desc("rsfs_http_response_bytes_total", "HTTP response body bytes read, by origin.", "origin")
	descRetries      = desc("rsfs_http_retries_total", "HTTP retries and resumed range bodies.")
	descCacheHits    = desc("rsfs_cache_hits_total", "Blocks found cached, by tier (memory; disk, asked on each memory miss).", "tier")
	descCacheMisses  = desc("rsfs_cache_misses_total", "Blocks not found cached, by tier.", "tier")
	descCacheEvict   = desc("rsfs_cache_evictions_total", "Blocks evicted to stay within the tier's size, by tier.", "tier")
	descCacheBytes   = desc("rsfs_cache_bytes", "Bytes cached now, by tier.", "tier")
	descVerify       = desc("rsfs_verification_failures_total", "Contents whose bytes disagreed with their published length or hash.")
	descReadErrors   = desc("rsfs_read_errors_total", "Reads answered with EIO.")
	descPolls        = desc("rsfs_polls_total", "Polls of the Change Lists (of an Atom-PMH feed: of its subscription document), by result (ok, error).", "result")
	descPollDuration = desc("rsfs_last_poll_duration_seconds", "How long the last poll took.")
	descPollTime     = desc("rsfs_last_poll_timestamp_seconds", "When the last poll started (Unix time).")
	descApplied      = desc("rsfs_changes_applied_total", "Changes applied, polled or pushed.")
	descReloads      = desc("rsfs_reloads_total", "Reloads of the Resource Lists.")
	descPushed       = desc("rsfs_notifications_pushed_total", "Notifications pushed by hubs.")
	descLag          = desc("rsfs_change_lag_seconds", "How far a set's position is behind the newest change its Change Lists listed (a feed's harvest mark behind the newest atom:updated read), by set (a feed: its URL).", "set")
	descPosition     = desc("rsfs_set_position_timestamp_seconds", "A set's follow position: every change up to it is applied (a feed's: its harvest mark) (Unix time), by set.", "set")
	descResources    = desc("rsfs_resources", "Resources in the tree.")
	descSetResources = desc("rsfs_set_resources", "Resources in the tree, by the resource set that lists them.", "set")
	descHeld         = desc("rsfs_held", "1 while changes are held back (rsfs hold), else 0.")
)

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRequests, descBytes, descRetries, descCacheHits, descCacheMisses,
		descCacheEvict, descCacheBytes, descVerify, descReadErrors, descPolls, descPollDuration, descPollTime,
		descApplied, descReloads, descPushed, descLag, descPosition, descResources, descSetResources, descHeld} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	client := c.r.client
	for _, t := range client.Traffic() {
		counter(descRequests, float64(t.Requests), t.Origin, t.Kind, strconv.Itoa(t.Status))
	}
	for o, n := range client.BytesByOrigin() {
		counter(descBytes, float64(n), o)
	}
	counter(descRetries, float64(client.Stats().Retries))

	cs := c.r.blocks.Stats()
	counter(descCacheHits, float64(cs.Hits), "memory")
	counter(descCacheMisses, float64(cs.Misses), "memory")
	counter(descCacheEvict, float64(cs.Evictions), "memory")
	gauge(descCacheBytes, float64(cs.Bytes), "memory")
	if c.r.diskMax > 0 {
		counter(descCacheHits, float64(cs.DiskHits), "disk")
		counter(descCacheMisses, float64(cs.Misses-min(cs.DiskHits, cs.Misses)), "disk")
		counter(descCacheEvict, float64(cs.DiskEvictions), "disk")
		gauge(descCacheBytes, float64(cs.DiskBytes), "disk")
	}
	counter(descVerify, float64(c.r.blocks.VerifyFailures(0, 0).Total))
	counter(descReadErrors, float64(c.r.fsys.ReadErrors(0, 0).Total))

	st := c.r.follower.Status()
	counter(descPolls, float64(st.Polls-st.PollFailures), "ok")
	counter(descPolls, float64(st.PollFailures), "error")
	if !st.LastPoll.IsZero() {
		gauge(descPollDuration, st.LastPollTook.Seconds())
		gauge(descPollTime, float64(st.LastPoll.UnixNano())/1e9)
	}
	counter(descApplied, float64(st.Applied))
	counter(descReloads, float64(st.Reloads))
	counter(descPushed, float64(st.Pushed))
	for _, s := range st.Sets {
		gauge(descLag, s.Newest.Sub(s.Position).Seconds(), s.Set)
		gauge(descPosition, float64(s.Position.UnixNano())/1e9, s.Set)
		gauge(descSetResources, float64(s.Resources), s.Set)
	}
	gauge(descResources, float64(c.r.count()))
	held := 0.0
	if _, ok := heldUntil(c.r.dir); ok {
		held = 1
	}
	gauge(descHeld, held)
}
