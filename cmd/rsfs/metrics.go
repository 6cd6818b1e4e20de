package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/pflag"

	"rsfs/fs"
	"rsfs/metrics"
	"rsfs/mountutil"
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

// mountFS mounts fsys on dir, with its FUSE operations measured when
// metrics are on, and tells fsys what the kernel can do.
func (sf *systemFlags) mountFS(dir string, fsys *fs.FS, name string, allowOther bool) (*fuse.Server, error) {
	server, err := sf.serveFS(dir, fsys, fsys.MountOptions(name, allowOther))
	if err != nil {
		return nil, err
	}
	fsys.Mounted(server.KernelSettings())
	return server, nil
}

func (sf *systemFlags) serveFS(dir string, raw fuse.RawFileSystem, opts *fuse.MountOptions) (*fuse.Server, error) {
	if sf.metrics != nil {
		raw = metrics.WrapFUSE(raw, sf.metrics.reg)
	}
	// fusermount3 says why it failed on stderr, which go-fuse gives it:
	// that reason goes into the error (and so into the log, as JSON too).
	var server *fuse.Server
	said, err := mountutil.CaptureStderr(func() error {
		var err error
		server, err = fuse.NewServer(raw, dir, opts)
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
	return server, nil
}

// serveMetrics registers the mount's collector and serves until ctx ends.
func (sf *systemFlags) serveMetrics(ctx context.Context, r *metrics.Mount) {
	m := sf.metrics
	if m == nil {
		return
	}
	m.reg.MustRegister(r.Collector())
	go func() {
		if err := m.srv.Serve(m.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("metrics server", "err", err)
		}
	}()
	context.AfterFunc(ctx, func() { _ = m.srv.Close() })
	slog.Info("serving metrics", "url", "http://"+m.ln.Addr().String()+"/metrics")
}
