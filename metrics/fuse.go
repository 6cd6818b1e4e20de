// Package metrics measures the FUSE operations a mount serves, for
// Prometheus: a fuse.RawFileSystem that times each operation it passes on.
package metrics

import (
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/prometheus/client_golang/prometheus"
)

// FUSE wraps a RawFileSystem and counts and times the operations a
// read-only file system serves (the others pass through unmeasured).
type FUSE struct {
	fuse.RawFileSystem
	latency *prometheus.HistogramVec
	errors  *prometheus.CounterVec
}

// WrapFUSE returns raw measured, its metrics registered with reg:
// rsfs_fuse_operation_duration_seconds{op} (a histogram: its _count is
// the operations served) and rsfs_fuse_operation_errors_total{op}.
func WrapFUSE(raw fuse.RawFileSystem, reg prometheus.Registerer) *FUSE {
	f := &FUSE{
		RawFileSystem: raw,
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rsfs_fuse_operation_duration_seconds",
			Help:    "Time to answer a FUSE operation, by operation.",
			Buckets: prometheus.ExponentialBuckets(10e-6, 4, 11), // 10µs to about 10s
		}, []string{"op"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rsfs_fuse_operation_errors_total",
			Help: "FUSE operations answered with an error other than ENOENT or ENODATA, by operation.",
		}, []string{"op"}),
	}
	reg.MustRegister(f.latency, f.errors)
	return f
}

func (f *FUSE) done(op string, start time.Time, st fuse.Status) {
	f.latency.WithLabelValues(op).Observe(time.Since(start).Seconds())
	if st != fuse.OK && st != fuse.ENOENT && st != fuse.ENODATA {
		f.errors.WithLabelValues(op).Inc()
	}
}

func (f *FUSE) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	start := time.Now()
	st := f.RawFileSystem.Lookup(cancel, h, name, out)
	f.done("lookup", start, st)
	return st
}

func (f *FUSE) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	start := time.Now()
	st := f.RawFileSystem.GetAttr(cancel, in, out)
	f.done("getattr", start, st)
	return st
}

func (f *FUSE) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	start := time.Now()
	st := f.RawFileSystem.Open(cancel, in, out)
	f.done("open", start, st)
	return st
}

func (f *FUSE) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	start := time.Now()
	r, st := f.RawFileSystem.Read(cancel, in, buf)
	f.done("read", start, st)
	return r, st
}

func (f *FUSE) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	start := time.Now()
	st := f.RawFileSystem.OpenDir(cancel, in, out)
	f.done("opendir", start, st)
	return st
}

func (f *FUSE) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	start := time.Now()
	st := f.RawFileSystem.ReadDir(cancel, in, out)
	f.done("readdir", start, st)
	return st
}

func (f *FUSE) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	start := time.Now()
	st := f.RawFileSystem.ReadDirPlus(cancel, in, out)
	f.done("readdirplus", start, st)
	return st
}

func (f *FUSE) GetXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	start := time.Now()
	n, st := f.RawFileSystem.GetXAttr(cancel, h, attr, dest)
	f.done("getxattr", start, st)
	return n, st
}

func (f *FUSE) ListXAttr(cancel <-chan struct{}, h *fuse.InHeader, dest []byte) (uint32, fuse.Status) {
	start := time.Now()
	n, st := f.RawFileSystem.ListXAttr(cancel, h, dest)
	f.done("listxattr", start, st)
	return n, st
}

func (f *FUSE) StatFs(cancel <-chan struct{}, h *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	start := time.Now()
	st := f.RawFileSystem.StatFs(cancel, h, out)
	f.done("statfs", start, st)
	return st
}
