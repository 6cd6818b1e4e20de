package prefetch

import (
	"context"
	"encoding/json"
	"path"
	"sync"
	"time"

	"rsfs/cache"
	"rsfs/catalog"
)

// A warm job fills the disk cache with every file under a node and pins
// them there (cache.Keep, cache.Pin), for `rsfs warm PATH` (package fs
// asks through a getxattr): AskJob starts job ID, a fresh random name the
// command picks, or, once started, answers its progress as JSON (Job). A
// job is forgotten warmJobKept after its last question, or once
// warmJobsMax newer ones exist. Release unpins the files under a node.
const (
	warmJobKept   = 10 * time.Minute
	warmJobsMax   = 64
	warmFailedMax = 200 // failures named in a job's answer; the count is whole
	// blockFileOverhead is what one block file takes beyond its bytes, for
	// the fit check: header and id, rounded up.
	blockFileOverhead = 512
)

// Job is a warm job's state, as AskJob answers it.
type Job struct {
	ID    string `json:"id"`
	Path  string `json:"path"` // relative to the mount's root
	Files int    `json:"files"`
	Bytes int64  `json:"bytes"`
	// OnDisk are the files (and their bytes) that were on disk already
	// when the job started: nothing is fetched for them.
	OnDiskFiles int   `json:"on_disk_files"`
	OnDiskBytes int64 `json:"on_disk_bytes"`
	DoneFiles   int   `json:"done_files"` // on disk now, or failed
	DoneBytes   int64 `json:"done_bytes"`
	// Fetched are the files the job filled (from dumps or one by one).
	FetchedFiles int       `json:"fetched_files"`
	FetchedBytes int64     `json:"fetched_bytes"`
	FailedCount  int       `json:"failed_count"`
	Failed       []Failure `json:"failed"`
	// DiskMax is --cache-max-size; Needs, when the subtree does not fit
	// it, how many more bytes it would need (and the job does nothing).
	DiskMax  int64     `json:"disk_max"`
	Needs    int64     `json:"needs,omitempty"`
	Error    string    `json:"error,omitempty"`
	Started  time.Time `json:"started"`
	Finished bool      `json:"finished"`
	Took     float64   `json:"took_seconds"`
}

// Failure is a file a warm job could not put on disk.
type Failure struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// Released is what Release answers.
type Released struct {
	Path  string `json:"path"`
	Files int    `json:"files"`
	Bytes int64  `json:"bytes"`
}

// jobs are the warm jobs asked about lately, by ID.
type jobs struct {
	mu   sync.Mutex
	jobs map[string]*warmJobRun
}

type warmJobRun struct {
	mu    sync.Mutex
	st    Job
	asked time.Time
}

func (j *warmJobRun) snapshot() []byte {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.asked = time.Now()
	st := j.st
	if !st.Finished {
		st.Took = time.Since(st.Started).Seconds()
	}
	data, _ := json.Marshal(st)
	return data
}

// AskJob starts warm job id over the files under node, or answers its
// progress once started, as JSON (Job).
func (p *Prefetcher) AskJob(id string, node catalog.NodeID) []byte {
	w := &p.jobs
	w.mu.Lock()
	j := w.jobs[id]
	if j == nil {
		w.forgetLocked()
		j = &warmJobRun{st: Job{ID: id, Started: time.Now().UTC(), Failed: []Failure{}}, asked: time.Now()}
		if w.jobs == nil {
			w.jobs = make(map[string]*warmJobRun)
		}
		w.jobs[id] = j
		w.mu.Unlock()
		p.startWarm(j, node)
	} else {
		w.mu.Unlock()
	}
	return j.snapshot()
}

// forgetLocked drops jobs not asked about for warmJobKept, and the oldest
// beyond warmJobsMax. w.mu must be held.
func (w *jobs) forgetLocked() {
	var oldest string
	var oldestAt time.Time
	for id, j := range w.jobs {
		j.mu.Lock()
		asked, done := j.asked, j.st.Finished
		j.mu.Unlock()
		if done && time.Since(asked) > warmJobKept {
			delete(w.jobs, id)
			continue
		}
		if oldest == "" || asked.Before(oldestAt) {
			oldest, oldestAt = id, asked
		}
	}
	if len(w.jobs) >= warmJobsMax {
		delete(w.jobs, oldest)
	}
}

// warmEntry is one file of a warm job.
type warmEntry struct {
	path string
	v    catalog.FileVersion
}

// startWarm plans job j over the files under id: what is on disk, whether
// the rest fits, then fills and pins them in the background.
func (p *Prefetcher) startWarm(j *warmJobRun, id catalog.NodeID) {
	var entries []warmEntry
	p.eachFilePath(id, p.pathOf(id), func(p string, v catalog.FileVersion) bool {
		entries = append(entries, warmEntry{p, v})
		return true
	})
	_, diskMax := p.cfg.Cache.Bounds()
	var total int64
	contents := make([]cache.Content, len(entries))
	for i, e := range entries {
		contents[i] = ContentOf(e.v)
		total += e.v.Resource.Length
	}
	j.mu.Lock()
	j.st.Path, j.st.Files, j.st.Bytes, j.st.DiskMax = p.pathOf(id), len(entries), total, diskMax
	bs := int64(p.cfg.Cache.BlockSize())
	var need int64
	for _, e := range entries {
		need += e.v.Resource.Length + (e.v.Resource.Length+bs-1)/bs*blockFileOverhead
	}
	switch {
	case diskMax == 0:
		j.st.Error, j.st.Finished = cache.ErrNoDisk.Error(), true
	case need > diskMax:
		j.st.Needs, j.st.Finished = need-diskMax, true
		j.st.Error = "does not fit the disk cache's maximum size"
	}
	done := j.st.Finished
	j.mu.Unlock()
	if done {
		return
	}
	if err := p.cfg.Cache.Pin(contents); err != nil {
		p.log.Warn("warm: pins not saved; they hold until unmount", "path", j.st.Path, "err", err)
	}
	go p.runWarm(j, entries, contents)
}

// runWarm fills the job's files into the disk cache and records each
// outcome.
func (p *Prefetcher) runWarm(j *warmJobRun, entries []warmEntry, contents []cache.Content) {
	items := make([]cache.WarmItem, len(entries))
	for i, e := range entries {
		items[i] = cache.WarmItem{Content: contents[i], Fetcher: p.cfg.Fetcher(e.v.Resource)}
	}
	var batch func(ctx context.Context, which []int) [][]byte
	if p.cfg.Batch != nil {
		batch = func(ctx context.Context, which []int) [][]byte {
			rs := make([]*catalog.Resource, len(which))
			for k, i := range which {
				rs[k] = entries[i].v.Resource
			}
			return p.cfg.Batch(ctx, rs)
		}
	}
	p.log.Info("warm: started", "path", j.st.Path, "files", len(entries))
	p.cfg.Cache.Keep(p.closing, items, batch, func(i int, fetched bool, err error) {
		size := contents[i].Size
		j.mu.Lock()
		defer j.mu.Unlock()
		j.st.DoneFiles++
		switch {
		case err != nil:
			j.st.FailedCount++
			if len(j.st.Failed) < warmFailedMax {
				j.st.Failed = append(j.st.Failed, Failure{Path: entries[i].path, Error: err.Error()})
			}
		case fetched:
			j.st.FetchedFiles++
			j.st.FetchedBytes += size
			j.st.DoneBytes += size
		default:
			j.st.OnDiskFiles++
			j.st.OnDiskBytes += size
			j.st.DoneBytes += size
		}
	})
	j.mu.Lock()
	j.st.Finished, j.st.Took = true, time.Since(j.st.Started).Seconds()
	st := j.st
	j.mu.Unlock()
	p.log.Info("warm: finished", "path", st.Path, "files", st.Files, "fetched", st.FetchedFiles,
		"on_disk_before", st.OnDiskFiles, "failed", st.FailedCount, "took", time.Duration(st.Took*float64(time.Second)).Round(time.Millisecond))
}

// Release unpins the files under node and answers how many, as JSON
// (Released).
func (p *Prefetcher) Release(node catalog.NodeID) []byte {
	rel := Released{Path: p.pathOf(node)}
	var contents []cache.Content
	p.eachFilePath(node, rel.Path, func(_ string, v catalog.FileVersion) bool {
		ct := ContentOf(v)
		if p.cfg.Cache.Pinned(ct) {
			rel.Files++
			rel.Bytes += ct.Size
		}
		contents = append(contents, ct)
		return true
	})
	if err := p.cfg.Cache.Unpin(contents); err != nil {
		p.log.Warn("release of warmed files: pins not saved", "path", rel.Path, "err", err)
	}
	data, _ := json.Marshal(rel)
	return data
}

// eachFilePath calls fn with the path (relative to the root) and the
// version of each file under id (id itself if it is a file), in tree
// order, until fn returns false; it reports whether it went through all.
func (p *Prefetcher) eachFilePath(id catalog.NodeID, at string, fn func(string, catalog.FileVersion) bool) bool {
	if !id.IsDir() {
		v, ok := p.cfg.Catalog.Version(id)
		return !ok || fn(at, v)
	}
	more := true
	p.cfg.Catalog.ReadDir(id, func(name string, cid catalog.NodeID, a catalog.Attr) bool {
		if a.Dir {
			more = p.eachFilePath(cid, path.Join(at, name), fn)
			return more
		}
		if v, ok := p.cfg.Catalog.Version(cid); ok {
			more = fn(path.Join(at, name), v)
		}
		return more
	})
	return more
}

// pathOf is node id's path relative to the root ("." for the root).
func (p *Prefetcher) pathOf(id catalog.NodeID) string {
	if at := p.cfg.Catalog.Path(id); at != "" {
		return at
	}
	return "."
}
