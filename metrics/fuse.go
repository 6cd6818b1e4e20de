// Package metrics reads a mount's state for Prometheus: Mount is the
// collector /metrics scrapes, from the same accessors as the status
// (status.Mount, which it gives the cache's tiers and the traffic in the
// status model); FUSE times each FUSE operation a mount serves (a wrapping
// fuse.RawFileSystem), only when metrics are on.
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
			Help: "FUSE operations answered with an error other than ENOENT, ENODATA or ENOSYS, by operation.",
		}, []string{"op"}),
	}
	reg.MustRegister(f.latency, f.errors)
	return f
}

// done records an operation that started at start and answered *st (read
// when the deferred call runs, after the operation returned).
func (f *FUSE) done(op string, start time.Time, st *fuse.Status) {
	f.latency.WithLabelValues(op).Observe(time.Since(start).Seconds())
	// ENOSYS is no failure: it tells the kernel not to send an operation
	// again (OPEN and FLUSH of files).
	if s := *st; s != fuse.OK && s != fuse.ENOENT && s != fuse.ENODATA && s != fuse.ENOSYS {
		f.errors.WithLabelValues(op).Inc()
	}
}

func (f *FUSE) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) (st fuse.Status) {
	defer f.done("lookup", time.Now(), &st)
	return f.RawFileSystem.Lookup(cancel, h, name, out)
}

func (f *FUSE) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) (st fuse.Status) {
	defer f.done("getattr", time.Now(), &st)
	return f.RawFileSystem.GetAttr(cancel, in, out)
}

func (f *FUSE) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) (st fuse.Status) {
	defer f.done("open", time.Now(), &st)
	return f.RawFileSystem.Open(cancel, in, out)
}

func (f *FUSE) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (r fuse.ReadResult, st fuse.Status) {
	defer f.done("read", time.Now(), &st)
	return f.RawFileSystem.Read(cancel, in, buf)
}

func (f *FUSE) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) (st fuse.Status) {
	defer f.done("opendir", time.Now(), &st)
	return f.RawFileSystem.OpenDir(cancel, in, out)
}

func (f *FUSE) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) (st fuse.Status) {
	defer f.done("readdir", time.Now(), &st)
	return f.RawFileSystem.ReadDir(cancel, in, out)
}

func (f *FUSE) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) (st fuse.Status) {
	defer f.done("readdirplus", time.Now(), &st)
	return f.RawFileSystem.ReadDirPlus(cancel, in, out)
}

func (f *FUSE) GetXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string, dest []byte) (n uint32, st fuse.Status) {
	defer f.done("getxattr", time.Now(), &st)
	return f.RawFileSystem.GetXAttr(cancel, h, attr, dest)
}

func (f *FUSE) ListXAttr(cancel <-chan struct{}, h *fuse.InHeader, dest []byte) (n uint32, st fuse.Status) {
	defer f.done("listxattr", time.Now(), &st)
	return f.RawFileSystem.ListXAttr(cancel, h, dest)
}

func (f *FUSE) StatFs(cancel <-chan struct{}, h *fuse.InHeader, out *fuse.StatfsOut) (st fuse.Status) {
	defer f.done("statfs", time.Now(), &st)
	return f.RawFileSystem.StatFs(cancel, h, out)
}
