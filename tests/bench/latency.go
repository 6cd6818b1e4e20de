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

// latencyConfig is what -latency measures: walkers (grep -r, rsync, tar,
// restic) over small files in each layout, served by nginx behind a proxy
// that delays every request, so the round trip of a distant Source is paid
// on 127.0.0.1; over HTTP/1.1 and over HTTPS with HTTP/2.
type latencyConfig struct {
	delays    []time.Duration
	peersAt   []time.Duration // delays at which rsfs base and rclone are measured too
	layouts   []layout
	walkers   []walker
	protos    []string // h1, h2
	clients   []string // rsfs, rsfs-dump, base, base-dump, rclone
	files     int
	perPkg    int  // small files per dump package
	shuffled  bool // the dump's members in a shuffled order, not the order they were created in
	size      int64
	reps      int
	peerReps  int
	base      string
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
// over the same cache directory and walked again.
type latencyClient struct {
	c       peerClient
	proto   string
	remount bool
	peer    bool // measured only at cfg.peersAt
}

// cellKey names one cell of the report.
type cellKey struct {
	layout string
	delay  time.Duration
	proto  string
	client string
	walker string
}

type latencyBench struct {
	cfg      latencyConfig
	rsfsBin  string
	tmp      string
	first    map[cellKey][]sample
	again    map[cellKey][]sample
	trees    map[string]*peerTree // by layout, for the report
	loadFrom string
}

// Latency measures are, for each layout and protocol, on two Sources of
// the same tree: "md5" publishes a Resource List only, "dump" a Resource
// List and a Resource Dump.
func runLatency(cfg latencyConfig, rsfsBin, tmp string) error {
	lb := &latencyBench{cfg: cfg, rsfsBin: rsfsBin, tmp: tmp, first: map[cellKey][]sample{},
		again: map[cellKey][]sample{}, trees: map[string]*peerTree{}, loadFrom: loadAvg()}
	for _, l := range cfg.layouts {
		if err := lb.runLayout(l); err != nil {
			return fmt.Errorf("layout %s: %w", l.name, err)
		}
		if err := lb.report(loadAvg()); err != nil { // so far: a long run keeps what it measured
			return err
		}
	}
	return nil
}

// latencySources is one layout's Sources: their base URLs by name (md5-h1,
// dump-h1, md5-h2, dump-h2), and the certificate the HTTPS ones use.
type latencySources struct {
	urls    map[string]string
	cert    string
	proxies []*delayProxy
}

func (lb *latencyBench) runLayout(l layout) error {
	root := lb.cfg.dir
	if root == "" {
		root = filepath.Join(lb.tmp, "latency")
	}
	root = filepath.Join(root, l.name)
	if err := os.RemoveAll(root); err != nil {
		return err
	}
	p := &peerBench{cfg: peerConfig{small: lb.cfg.files, smallSize: lb.cfg.size, warmServer: lb.cfg.warmSever, dir: root},
		tmp: lb.tmp, times: map[string]map[string][]sample{}, refs: map[string][]sample{}, loadFrom: loadAvg()}
	t, err := genTree(root, l, lb.cfg.files, lb.cfg.size, 0)
	if err != nil {
		return err
	}
	p.tree, lb.trees[l.name] = t, t
	srcs, err := lb.serve(p, root)
	for _, px := range srcs.proxies {
		defer px.srv.Close()
	}
	if err != nil {
		return err
	}
	defer p.srv.stop()
	clients := lb.makeClients(srcs)
	for _, w := range lb.cfg.walkers {
		if w.mountOnly {
			continue // rsfs warm: no mount to warm in the served tree
		}
		lb.measureLocal(p, w, cellKey{l.name, 0, "", localClient, w.name})
	}
	for _, d := range lb.cfg.delays {
		for _, px := range srcs.proxies {
			px.delay.Store(int64(d))
		}
		for rep := range lb.cfg.reps {
			for _, c := range clients {
				if c.peer && (rep >= lb.cfg.peerReps || !slices.Contains(lb.cfg.peersAt, d)) {
					continue
				}
				for _, w := range lb.cfg.walkers {
					lb.measure(p, c, w, cellKey{l.name, d, c.proto, c.c.name, w.name}, rep)
				}
			}
		}
	}
	return nil
}

// serve writes the documents of each protocol's two Sources and starts
// nginx: one origin port per Source, each behind its own delaying proxy,
// and for HTTP/2 an HTTPS front before the proxy (client, nginx over TLS,
// the proxy, the origin), so every request pays the delay once.
func (lb *latencyBench) serve(p *peerBench, root string) (latencySources, error) {
	srcs := latencySources{urls: map[string]string{}}
	var fronts tlsFronts
	if slices.Contains(lb.cfg.protos, "h2") {
		cert, key, err := writeSelfSigned(root)
		if err != nil {
			return srcs, err
		}
		srcs.cert, fronts.Cert, fronts.Key = cert, cert, key
	}
	byName := map[string]int{}
	for _, proto := range lb.cfg.protos {
		ports, err := freePorts(4)
		if err != nil {
			return srcs, err
		}
		for i, kind := range []string{"md5", "dump"} {
			name := kind + "-" + proto
			byName[name] = ports[i]
			px, err := startDelayProxy(fmt.Sprintf("http://127.0.0.1:%d/", ports[i]))
			if err != nil {
				return srcs, err
			}
			srcs.proxies = append(srcs.proxies, px)
			srcs.urls[name] = px.url()
			if proto == "h2" {
				port := ports[2+i]
				fronts.Fronts = append(fronts.Fronts, tlsFront{Port: port, Upstream: px.port})
				srcs.urls[name] = fmt.Sprintf("https://127.0.0.1:%d/", port)
			}
			if err := lb.writeSource(p.tree, root, name, kind, proto, srcs.urls[name]); err != nil {
				return srcs, err
			}
		}
	}
	srvDir := filepath.Join(lb.tmp, "nginx-"+filepath.Base(root))
	if err := os.MkdirAll(srvDir, 0o755); err != nil {
		return srcs, err
	}
	var err error
	p.srv, err = startNginx(srvDir, p.tree, byName, fronts)
	return srcs, err
}

// writeSource writes the documents of one Source, published at base.
func (lb *latencyBench) writeSource(t *peerTree, root, name, kind, proto, base string) error {
	dir := filepath.Join(root, "docs-"+name)
	if kind == "dump" {
		return t.writeDumpDocs(name, dir, base, "dumps-"+proto, lb.cfg.perPkg, lb.cfg.shuffled)
	}
	listOnly, had := t.docs["md5"]
	if err := t.writeDocs(dir, base, "md5"); err != nil {
		return err
	}
	delete(t.docs, "md5")
	if had {
		t.docs["md5"] = listOnly
	}
	t.docs[name] = dir
	return nil
}

func (lb *latencyBench) makeClients(srcs latencySources) []latencyClient {
	var out []latencyClient
	for _, proto := range lb.cfg.protos {
		logf := func(n string) string { return filepath.Join(lb.tmp, n+"-"+proto+".log") }
		md5URL, dumpURL := srcs.urls["md5-"+proto], srcs.urls["dump-"+proto]
		flags := lb.cfg.flags
		var rcloneFlags []string
		if proto == "h2" {
			flags = append(slices.Clone(flags), "--ca-cert", srcs.cert)
			rcloneFlags = []string{"--ca-cert", srcs.cert}
		}
		add := func(c peerClient, remount, peer bool) {
			out = append(out, latencyClient{c: c, proto: proto, remount: remount, peer: peer})
		}
		for _, name := range lb.cfg.clients {
			switch name {
			case "rsfs":
				add(rsfsClient("rsfs", lb.rsfsBin, md5URL, logf("lat-rsfs"), flags), true, false)
			case "rsfs-dump":
				add(rsfsClient("rsfs, with a Resource Dump", lb.rsfsBin, dumpURL, logf("lat-rsfs-dump"), flags), true, false)
			case "base":
				if lb.cfg.base != "" {
					add(rsfsClient("rsfs base", lb.cfg.base, md5URL, logf("lat-base"), flags), true, true)
				}
			case "base-dump":
				if lb.cfg.base != "" {
					add(rsfsClient("rsfs base, with a Resource Dump", lb.cfg.base, dumpURL, logf("lat-base-dump"), flags), true, true)
				}
			case "rclone":
				add(rcloneClient("rclone mount", md5URL, lb.tmp, rcloneFlags...), false, true)
			}
		}
	}
	return out
}

// measure mounts c on a fresh cache directory and walks the small files
// with w; an rsfs client is then unmounted, mounted again over the same
// cache directory (every block on disk) and walked again.
func (lb *latencyBench) measure(p *peerBench, c latencyClient, w walker, k cellKey, rep int) {
	log.Printf("latency %s, %s, %s: %s, %s, run %d", k.layout, k.delay, k.proto, c.c.name, w.name, rep+1)
	scratch := filepath.Join(lb.tmp, "scratch")
	add := func(m map[cellKey][]sample, s sample) {
		m[k] = append(m[k], s)
		if s.err != "" {
			log.Printf("latency: %s: %s: failed: %s", c.c.name, w.name, s.err)
			return
		}
		log.Printf("latency: %s", lb.cell(summarizeLatency([]sample{s}), lb.trees[k.layout]))
	}
	walk := func(m *mounted) sample {
		if err := w.prepare(scratch); err != nil {
			return sample{err: err.Error()}
		}
		p.dropCaches()
		p.warm(".")
		cmd := strings.ReplaceAll(w.cmd(p.tree), "SCRATCH", scratch)
		return p.timeCmd(m.pid, strings.ReplaceAll(cmd, "DIR", m.dir))
	}
	p.dropCaches()
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
	add(lb.first, walk(m))
	if !c.remount {
		return
	}
	if err := lb.remount(m); err != nil {
		add(lb.again, sample{err: err.Error()})
		return
	}
	add(lb.again, walk(m))
}

// localClient names the walks of the served tree itself, with no mount:
// what each walker costs on this machine, in its load, with every file in
// the page cache.
const localClient = "local (the served tree, page cache warm)"

func (lb *latencyBench) measureLocal(p *peerBench, w walker, k cellKey) {
	scratch := filepath.Join(lb.tmp, "scratch")
	s := sample{}
	if err := w.prepare(scratch); err != nil {
		s.err = err.Error()
	} else {
		p.warm(".")
		cmd := strings.ReplaceAll(w.cmd(p.tree), "SCRATCH", scratch)
		s = p.timeCmd(0, strings.ReplaceAll(cmd, "DIR", p.tree.www))
	}
	lb.first[k] = append(lb.first[k], s)
	log.Printf("latency %s: local %s: %s", k.layout, w.name, lb.cell(summarizeLatency([]sample{s}), lb.trees[k.layout]))
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

func (lb *latencyBench) cell(s latencySummary, t *peerTree) string {
	if s.err != "" {
		return "failed: " + esc(shorten(s.err, 100))
	}
	own := t.ownBytes()
	perFile := s.secs / float64(t.small) * 1000
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
	order := "in the order the files were created"
	if lb.cfg.shuffled {
		order = "in a shuffled order, so a directory's files lie scattered through the packages"
	}
	fmt.Fprintf(&b, "## Latency run: walkers over small files, each request delayed\n\n")
	fmt.Fprintf(&b, "`%s`\n\n", commandLine())
	fmt.Fprintf(&b, "rsfs built from %s", sourceRev())
	if lb.cfg.base != "" {
		fmt.Fprintf(&b, "; rsfs base is %s", lb.cfg.base)
	}
	fmt.Fprintf(&b, ".\nWritten by the tool on %s: %s, load average %s at the start and %s at the end.\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), hostDesc(), lb.loadFrom, loadTo)
	fmt.Fprintf(&b, "nginx serves %d files of %d bytes in each layout, behind a proxy in the bench that sleeps the delay before forwarding each request. "+
		"Over HTTP/1.1 the clients talk to the proxy; over HTTP/2 to an nginx HTTPS front (`listen … ssl http2`, a self-signed certificate the clients are given) that passes each request to the proxy. "+
		"Two Sources of the same files: a Resource List (md5), and the same with a Resource Dump (packages of %d members, stored, %s) from which rsfs reads its batches. "+
		"Each cell is a walk on a fresh mount with a fresh cache directory (the page cache dropped): median time of %d (rsfs base and rclone: %d, at %s only), time per file, requests nginx logged (content: GETs of a file or a range of a package), bytes nginx sent and their ratio to the files' own bytes. "+
		"\"after a remount\" is rsfs unmounted and mounted again over the same cache directory, every block on disk, and walked again.\n\n",
		lb.cfg.files, lb.cfg.size, lb.cfg.perPkg, order, lb.cfg.reps, lb.cfg.peerReps, durations(lb.cfg.peersAt))
	fmt.Fprintf(&b, "Walkers:\n")
	for _, w := range lb.cfg.walkers {
		fmt.Fprintf(&b, "- %s: %s.\n", w.name, w.desc)
	}
	for _, l := range lb.cfg.layouts {
		lb.layoutTable(&b, l)
	}
	fmt.Fprintf(&b, "\n")
	fmt.Print("\n", b.String())
	if lb.cfg.out == "" {
		return nil
	}
	return upsertSection(lb.cfg.out, sectionKey(), b.String())
}

var protoNames = map[string]string{"h1": "HTTP/1.1", "h2": "HTTP/2"}

// layoutTable writes one layout's rows: a row per delay, protocol,
// client and walker measured.
func (lb *latencyBench) layoutTable(b *bytes.Buffer, l layout) {
	t := lb.trees[l.name]
	if t == nil {
		return
	}
	fmt.Fprintf(b, "\n### %s: %s\n\n", l.name, l.desc)
	fmt.Fprintf(b, "| delay | protocol | client | walker | first pass | after a remount |\n|---|---|---|---|---|---|\n")
	for _, w := range lb.cfg.walkers {
		if ss := lb.first[cellKey{l.name, 0, "", localClient, w.name}]; len(ss) > 0 {
			fmt.Fprintf(b, "| — | — | %s | %s | %s | — |\n", localClient, w.name, lb.cell(summarizeLatency(ss), t))
		}
	}
	for _, d := range lb.cfg.delays {
		for _, proto := range lb.cfg.protos {
			for _, name := range clientOrder {
				for _, w := range lb.cfg.walkers {
					k := cellKey{l.name, d, proto, name, w.name}
					ss := lb.first[k]
					if len(ss) == 0 {
						continue
					}
					again := "—"
					if len(lb.again[k]) > 0 {
						again = lb.cell(summarizeLatency(lb.again[k]), t)
					}
					fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", d, protoNames[proto], name, w.name,
						lb.cell(summarizeLatency(ss), t), again)
				}
			}
		}
	}
}

// clientOrder is the report's order of the clients.
var clientOrder = []string{"rsfs", "rsfs, with a Resource Dump", "rsfs base", "rsfs base, with a Resource Dump", "rclone mount"}

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
