package main

import (
	"bytes"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// latencyConfig is what -latency measures: grep -r over small files served
// by nginx behind a proxy that delays every request, so the round trip of
// a distant Source is paid on 127.0.0.1.
type latencyConfig struct {
	delays    []time.Duration
	peersAt   []time.Duration // delays at which rsfs base and rclone are measured too
	files     int
	perPkg    int  // small files per dump package
	shuffled  bool // the dump's members in a shuffled order, not the paths'
	size      int64
	reps      int
	peerReps  int
	base      string
	rclone    bool
	dir       string
	out       string
	flags     []string
	warmSever bool
}

// delayProxy forwards every request to target after sleeping the delay.
type delayProxy struct {
	delay atomic.Int64 // ns
	srv   *http.Server
	port  int
}

func startDelayProxy(target string) (*delayProxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	rp.Transport = &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, DisableCompression: true}
	rp.ErrorLog = log.New(os.Stderr, "latency proxy: ", 0)
	p := &delayProxy{port: ln.Addr().(*net.TCPAddr).Port}
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Duration(p.delay.Load()))
		rp.ServeHTTP(w, r)
	})}
	go p.srv.Serve(ln)
	return p, nil
}

func (p *delayProxy) url() string { return fmt.Sprintf("http://127.0.0.1:%d/", p.port) }

// latencyClient is one mount measured: rsfs clients are also remounted
// over the same cache directory and read again.
type latencyClient struct {
	c       peerClient
	remount bool
	peer    bool // measured only at cfg.peersAt
}

type latencyBench struct {
	cfg      latencyConfig
	p        *peerBench // the tree, nginx, and its helpers (drop caches, timing)
	proxies  map[string]*delayProxy
	clients  []latencyClient
	first    map[string]map[time.Duration][]sample // client, delay
	again    map[string]map[time.Duration][]sample
	loadFrom string
}

// Latency measures are on two Sources of the same tree: "md5" publishes a
// Resource List only, "dump" a Resource List and a Resource Dump.
func runLatency(cfg latencyConfig, rsfsBin, tmp string) error {
	p := &peerBench{cfg: peerConfig{small: cfg.files, smallSize: cfg.size, warmServer: cfg.warmSever, dir: cfg.dir},
		tmp: tmp, times: map[string]map[string][]sample{}, refs: map[string][]sample{}, loadFrom: loadAvg()}
	lb := &latencyBench{cfg: cfg, p: p, proxies: map[string]*delayProxy{},
		first: map[string]map[time.Duration][]sample{}, again: map[string]map[time.Duration][]sample{}, loadFrom: loadAvg()}
	root := cfg.dir
	if root == "" {
		root = filepath.Join(tmp, "latency")
	}
	t, err := genTree(root, cfg.files, cfg.size, 0)
	if err != nil {
		return err
	}
	p.tree = t
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	byName := map[string]int{"md5": ports[0], "dump": ports[1]}
	for name, port := range byName {
		px, err := startDelayProxy(fmt.Sprintf("http://127.0.0.1:%d/", port))
		if err != nil {
			return err
		}
		defer px.srv.Close()
		lb.proxies[name] = px
	}
	if err := t.writeDocs(filepath.Join(root, "docs-md5"), lb.proxies["md5"].url(), "md5"); err != nil {
		return err
	}
	if err := t.writeDumpDocs(filepath.Join(root, "docs-dump"), lb.proxies["dump"].url(), cfg.perPkg, cfg.shuffled); err != nil {
		return err
	}
	srvDir := filepath.Join(tmp, "nginx")
	if err := os.MkdirAll(srvDir, 0o755); err != nil {
		return err
	}
	if p.srv, err = startNginx(srvDir, t, byName); err != nil {
		return err
	}
	defer p.srv.stop()
	lb.makeClients(rsfsBin, tmp)
	for _, d := range cfg.delays {
		for _, px := range lb.proxies {
			px.delay.Store(int64(d))
		}
		for rep := range cfg.reps {
			for _, c := range lb.clients {
				if c.peer && (rep >= cfg.peerReps || !slices.Contains(cfg.peersAt, d)) {
					continue
				}
				lb.measure(c, d, rep)
			}
		}
	}
	return lb.report(loadAvg())
}

func (lb *latencyBench) makeClients(rsfsBin, tmp string) {
	logf := func(n string) string { return filepath.Join(tmp, n+".log") }
	md5URL, dumpURL := lb.proxies["md5"].url(), lb.proxies["dump"].url()
	add := func(c peerClient, remount, peer bool) {
		lb.clients = append(lb.clients, latencyClient{c: c, remount: remount, peer: peer})
	}
	add(rsfsClient("rsfs", rsfsBin, md5URL, logf("lat-rsfs"), lb.cfg.flags), true, false)
	add(rsfsClient("rsfs, with a Resource Dump", rsfsBin, dumpURL, logf("lat-rsfs-dump"), lb.cfg.flags), true, false)
	if lb.cfg.base != "" {
		add(rsfsClient("rsfs base", lb.cfg.base, md5URL, logf("lat-base"), lb.cfg.flags), true, true)
		add(rsfsClient("rsfs base, with a Resource Dump", lb.cfg.base, dumpURL, logf("lat-base-dump"), lb.cfg.flags), true, true)
	}
	if lb.cfg.rclone {
		add(rcloneClient("rclone mount", md5URL, tmp), false, true)
	}
}

// measure mounts c on a fresh cache directory and greps the small files;
// an rsfs client is then unmounted, mounted again over the same cache
// directory (every block on disk) and grepped again.
func (lb *latencyBench) measure(c latencyClient, d time.Duration, rep int) {
	p := lb.p
	log.Printf("latency %s: %s, run %d", d, c.c.name, rep+1)
	grep := p.grepCmd("DIR/data")
	add := func(m map[string]map[time.Duration][]sample, s sample) {
		if m[c.c.name] == nil {
			m[c.c.name] = map[time.Duration][]sample{}
		}
		m[c.c.name][d] = append(m[c.c.name][d], s)
		if s.err != "" {
			log.Printf("latency %s: %s: failed: %s", d, c.c.name, s.err)
		}
	}
	p.dropCaches()
	p.warm(".")
	m, err := mountClient(c.c, p.tmp)
	if err != nil {
		add(lb.first, sample{err: err.Error()})
		return
	}
	defer func() {
		if err := m.unmount(); err != nil {
			log.Printf("latency: %s: %v", c.c.name, err)
		}
	}()
	add(lb.first, p.timeCmd(m.pid, strings.ReplaceAll(grep, "DIR", m.dir)))
	if !c.remount {
		return
	}
	if err := lb.remount(m); err != nil {
		add(lb.again, sample{err: err.Error()})
		return
	}
	p.dropCaches()
	p.warm(".")
	add(lb.again, p.timeCmd(m.pid, strings.ReplaceAll(grep, "DIR", m.dir)))
}

// remount unmounts m, keeping its cache directory, and mounts it again.
func (lb *latencyBench) remount(m *mounted) error {
	if err := run(m.c.umount[0], append(append([]string{}, m.c.umount[1:]...), m.dir)...); err != nil {
		return err
	}
	waitExit(m.pid)
	if err := m.c.mountFn(m.dir, m.cacheDir); err != nil {
		return fmt.Errorf("mount %s again: %w", m.c.name, err)
	}
	pid, err := pidServing(m.dir, filepath.Base(m.c.exe))
	if err != nil {
		return err
	}
	m.pid = pid
	return nil
}

// latencySummary is the median of a cell's samples.
type latencySummary struct {
	secs           float64
	total, content int
	bytes          int64
	n              int
	err            string
}

func summarizeLatency(ss []sample) latencySummary {
	if len(ss) == 0 {
		return latencySummary{err: "not measured"}
	}
	var secs, total, content, byts []float64
	for _, s := range ss {
		if s.err != "" {
			return latencySummary{err: s.err, n: len(ss)}
		}
		secs = append(secs, s.secs)
		total = append(total, float64(s.req.total))
		content = append(content, float64(s.req.content))
		byts = append(byts, float64(s.req.bytes))
	}
	return latencySummary{secs: median(secs), total: int(median(total)), content: int(median(content)),
		bytes: int64(median(byts)), n: len(ss)}
}

func (lb *latencyBench) cell(s latencySummary, own int64) string {
	if s.err != "" {
		return "failed: " + esc(shorten(s.err, 60))
	}
	perFile := s.secs / float64(lb.cfg.files) * 1000
	return fmt.Sprintf("%s (%.2f ms/file), %d req (%d content), %s (%.2f×)", fmtSecs(s.secs), perFile, s.total, s.content,
		fmtBytes(s.bytes), float64(s.bytes)/float64(own))
}

func fmtBytes(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.0f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

func (lb *latencyBench) report(loadTo string) error {
	var b bytes.Buffer
	own := int64(0)
	for _, f := range lb.p.tree.files[:lb.p.tree.small] {
		own += f.Size
	}
	order := "in path order"
	if lb.cfg.shuffled {
		order = "in a shuffled order, so a directory's files lie scattered through the packages"
	}
	fmt.Fprintf(&b, "## Latency run: grep -r over small files, each request delayed\n\n")
	fmt.Fprintf(&b, "`%s`\n\n", commandLine())
	fmt.Fprintf(&b, "rsfs built from %s", sourceRev())
	if lb.cfg.base != "" {
		fmt.Fprintf(&b, "; rsfs base is %s", lb.cfg.base)
	}
	fmt.Fprintf(&b, ".\nWritten by the tool on %s: %s, load average %s at the start and %s at the end.\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), hostDesc(), lb.loadFrom, loadTo)
	fmt.Fprintf(&b, "nginx serves %d files of %d bytes (%s in all) in directories of %d, behind a proxy in the bench that sleeps the delay before forwarding each request. "+
		"Two Sources of the same files: a Resource List (md5), and the same with a Resource Dump (packages of %d members, stored, %s) from which rsfs reads its batches. "+
		"Each cell is `grep -r` over the files on a fresh mount with a fresh cache directory (the page cache dropped): median time of %d (rsfs base and rclone: %d, at %s only), time per file, requests nginx logged (content: GETs of a file or a range of a package), bytes nginx sent and their ratio to the files' own bytes. "+
		"\"after a remount\" is rsfs unmounted and mounted again over the same cache directory, every block on disk, and grepped again.\n\n",
		lb.cfg.files, lb.cfg.size, fmtBytes(own), perDir, lb.cfg.perPkg, order, lb.cfg.reps, lb.cfg.peerReps, durations(lb.cfg.peersAt))
	fmt.Fprintf(&b, "| delay | client | grep -r, first pass | grep -r after a remount |\n|---|---|---|---|\n")
	for _, d := range lb.cfg.delays {
		for _, c := range lb.clients {
			ss := lb.first[c.c.name][d]
			if len(ss) == 0 {
				continue
			}
			again := "—"
			if c.remount {
				again = lb.cell(summarizeLatency(lb.again[c.c.name][d]), own)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", d, c.c.name, lb.cell(summarizeLatency(ss), own), again)
		}
	}
	fmt.Fprintf(&b, "\n")
	fmt.Print("\n", b.String())
	if lb.cfg.out == "" {
		return nil
	}
	return upsertSection(lb.cfg.out, sectionKey(), b.String())
}

func durations(ds []time.Duration) string {
	var s []string
	for _, d := range ds {
		s = append(s, d.String())
	}
	return strings.Join(s, ", ")
}

func parseDurations(s string) []time.Duration {
	var out []time.Duration
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if f == "0" {
			out = append(out, 0)
			continue
		}
		d, err := time.ParseDuration(f)
		must(err)
		out = append(out, d)
	}
	return out
}
