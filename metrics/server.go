package metrics

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Server is a mount's Prometheus registry, with the Go runtime's and the
// process's collectors, and the listener its /metrics is served on.
type Server struct {
	reg *prometheus.Registry
	ln  net.Listener
	srv *http.Server
}

// Listen binds addr before anything is mounted, so that an address in use
// is a clear error; Serve serves it.
func Listen(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	return &Server{reg: reg, ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}, nil
}

// WrapFUSE measures raw's FUSE operations into the server's registry (nil
// server: raw as it is).
func (s *Server) WrapFUSE(raw fuse.RawFileSystem) fuse.RawFileSystem {
	if s == nil {
		return raw
	}
	return WrapFUSE(raw, s.reg)
}

// Serve registers the mount's collector and serves until ctx ends. A nil
// server does nothing.
func (s *Server) Serve(ctx context.Context, m *Mount) {
	if s == nil {
		return
	}
	s.reg.MustRegister(m.Collector())
	go func() {
		if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("metrics server", "err", err)
		}
	}()
	context.AfterFunc(ctx, func() { _ = s.srv.Close() })
	slog.Info("serving metrics", "url", "http://"+s.ln.Addr().String()+"/metrics")
}
