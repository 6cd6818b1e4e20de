package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/template"
	"time"
)

// throttleConfig is what -throttle measures (issue 38, "servers that
// defend themselves"): stock nginx limit_req in front of a Source, and
// what a new user of a mount sees there.
type throttleConfig struct {
	rates     []int
	statuses  []int
	protos    []string
	files     int
	size      int64
	big       int64
	extra     bool
	maxRate   int // files of the --max-rate row
	bwSize    int64
	perList   int // entries per Resource List of the "lists at load" row
	base      string
	dir       string
	out       string
	flags     []string
	timeScale float64 // a grep may take this many times files ÷ rate (plus a minute) before it is stopped
}

// throttleCase is one limited Source: a protocol, a rate and a status.
type throttleCase struct {
	proto  string
	rate   int
	status int
	url    string
	log    string // the access log of the server the client talks to
}

// throttleResult is one client's walk of one case.
type throttleResult struct {
	c        throttleCase
	client   string
	mountErr string
	ready    float64
	grepSecs float64
	grepErr  string // timeout, or grep's exit for another reason than unreadable files
	matched  int
	eio      int // stderr lines of grep with Input/output error
	errs     int // every stderr line of grep
	reqs     logCount
	bigDone  bool
	bigOK    bool
	bigSecs  float64
	bigErr   string
	bigReqs  logCount
}

// throttleExtra is one row of the extra table.
type throttleExtra struct{ what, client, result, target, met string }

type throttleBench struct {
	cfg      throttleConfig
	tmp      string
	tree     *peerTree
	srv      *nginxServer
	cert     string
	cases    []throttleCase
	open     string // URL of the unlimited Source of the --max-rate and --bwlimit rows
	openLog  string
	openTree *peerTree
	lists    string // URL of the Source of many Resource Lists behind 2 r/s
	listsLog string
	listDocs int
	clients  []throttleClient
	results  []throttleResult
	extras   []throttleExtra
	notes    []string
	loadFrom string
}

type throttleClient struct {
	name, bin string
	isNew     bool // the working tree's binary (or -rsfs): the only one the extra rows with new flags run
}

// The access log line: request end ($msec), its duration, status, bytes,
// method, URI, protocol and Range header.
const throttleLogFormat = `'$msec $request_time $status $body_bytes_sent $request_method "$request_uri" $server_protocol "$http_range"'`

var throttleConf = template.Must(template.New("nginx-throttle.conf").Parse(`
user root;
worker_processes 2;
daemon off;
master_process on;
pid {{.Dir}}/nginx.pid;
error_log {{.ErrorLog}} warn;
events { worker_connections 4096; }
http {
  log_format throttle ` + throttleLogFormat + `;
  access_log off;
  client_body_temp_path {{.Dir}}/client_body;
  proxy_temp_path {{.Dir}}/proxy;
  fastcgi_temp_path {{.Dir}}/fastcgi;
  uwsgi_temp_path {{.Dir}}/uwsgi;
  scgi_temp_path {{.Dir}}/scgi;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  keepalive_timeout 120s;
  types { text/plain txt; application/xml xml; application/octet-stream bin; }
  default_type application/octet-stream;
{{range .Servers}}
{{- if .Rate}}
  limit_req_zone $binary_remote_addr zone={{.Zone}}:1m rate={{.Rate}}r/s;
{{- end}}
{{- if .Upstream}}
  upstream up{{.Port}} { server 127.0.0.1:{{.Upstream}}; keepalive 256; }
{{- end}}
  server {
{{- if .TLS}}
    listen 127.0.0.1:{{.Port}} ssl http2;
    ssl_certificate {{$.Cert}};
    ssl_certificate_key {{$.Key}};
    http2_max_concurrent_streams 128;
{{- else}}
    listen 127.0.0.1:{{.Port}};
{{- end}}
{{- if .Log}}
    access_log {{.Log}} throttle;
{{- end}}
{{- if .Rate}}
    limit_req zone={{.Zone}} burst={{.Burst}} nodelay;
    limit_req_status {{.Status}};
{{- end}}
{{- if .Upstream}}
    location / {
      proxy_pass http://up{{.Port}};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
{{- else}}
    root {{.WWW}};
    location = /.well-known/resourcesync { root {{.Docs}}; default_type application/xml; }
    location ~ ^/(capabilitylist|resourcelist(-[0-9]+)?|resourcedump)\.xml$ { root {{.Docs}}; }
{{- end}}
  }
{{end}}
}
`))

// throttleServer is one server block: limited if Rate > 0, a TLS front
// passing to Upstream if that is set, else serving WWW and Docs.
type throttleServer struct {
	Port, Upstream       int
	TLS                  bool
	Rate, Burst, Status  int
	Zone, Log, WWW, Docs string
	plain                bool // answers plain HTTP GETs: waited for at start
}

func runThrottle(cfg throttleConfig, rsfsBin, tmp string) error {
	tb := &throttleBench{cfg: cfg, tmp: tmp, loadFrom: loadAvg()}
	tb.clients = []throttleClient{{name: "rsfs", bin: rsfsBin, isNew: true}}
	if cfg.base != "" {
		tb.clients = append(tb.clients, throttleClient{name: "base", bin: cfg.base})
	}
	if err := tb.setUp(); err != nil {
		return err
	}
	defer tb.srv.stop()
	for _, proto := range cfg.protos {
		for _, c := range tb.cases {
			if c.proto != proto {
				continue
			}
			for _, cl := range tb.clients {
				tb.measure(c, cl)
			}
		}
		if err := tb.report(); err != nil { // so far: a long run keeps what it measured
			return err
		}
	}
	if cfg.extra {
		tb.runExtras()
	}
	return tb.report()
}

func (tb *throttleBench) setUp() error {
	root := tb.cfg.dir
	if root == "" {
		root = filepath.Join(tb.tmp, "throttle")
	}
	if err := os.RemoveAll(root); err != nil {
		return err
	}
	start := time.Now()
	t, err := genTree(filepath.Join(root, "tree"), layouts["flat"], tb.cfg.files, tb.cfg.size, tb.cfg.big)
	if err != nil {
		return err
	}
	tb.tree = t
	if tb.cfg.extra {
		if tb.openTree, err = genTree(filepath.Join(root, "open"), layouts["flat"], tb.cfg.maxRate, tb.cfg.size, tb.cfg.bwSize); err != nil {
			return err
		}
	}
	log.Printf("throttle: generated the trees in %s (%.1f s)", root, time.Since(start).Seconds())
	cert, key := "", ""
	if slices.Contains(tb.cfg.protos, "h2") {
		if cert, key, err = writeSelfSigned(root); err != nil {
			return err
		}
		tb.cert = cert
	}
	srvDir := filepath.Join(tb.tmp, "nginx-throttle")
	if err := os.MkdirAll(srvDir, 0o755); err != nil {
		return err
	}
	var servers []throttleServer
	zone := 0
	for _, proto := range tb.cfg.protos {
		for _, rate := range tb.cfg.rates {
			for _, status := range tb.cfg.statuses {
				ports, err := freePorts(2)
				if err != nil {
					return err
				}
				zone++
				name := fmt.Sprintf("%s-%d-%d", proto, rate, status)
				c := throttleCase{proto: proto, rate: rate, status: status, log: filepath.Join(srvDir, name+".log")}
				limited := throttleServer{Port: ports[0], Rate: rate, Burst: max(rate/2, 1), Status: status,
					Zone: fmt.Sprintf("rs%d", zone), Log: c.log}
				docs := filepath.Join(root, "docs-"+name)
				if proto == "h2" {
					// The limit and the log are at the TLS front the client
					// talks to; the origin behind it serves everything.
					c.url = fmt.Sprintf("https://127.0.0.1:%d/", ports[0])
					limited.TLS, limited.Upstream = true, ports[1]
					servers = append(servers, limited,
						throttleServer{Port: ports[1], WWW: t.www, Docs: docs, plain: true})
				} else {
					c.url = fmt.Sprintf("http://127.0.0.1:%d/", ports[0])
					limited.WWW, limited.Docs, limited.plain = t.www, docs, true
					servers = append(servers, limited)
				}
				if err := writeListDocs(docs, c.url, "md5", t.files, perList); err != nil {
					return err
				}
				tb.cases = append(tb.cases, c)
			}
		}
	}
	if tb.cfg.extra {
		ports, err := freePorts(2)
		if err != nil {
			return err
		}
		tb.open = fmt.Sprintf("http://127.0.0.1:%d/", ports[0])
		tb.openLog = filepath.Join(srvDir, "open.log")
		openDocs := filepath.Join(root, "docs-open")
		if err := writeListDocs(openDocs, tb.open, "md5", tb.openTree.files, perList); err != nil {
			return err
		}
		servers = append(servers, throttleServer{Port: ports[0], Log: tb.openLog, WWW: tb.openTree.www, Docs: openDocs, plain: true})
		tb.lists = fmt.Sprintf("http://127.0.0.1:%d/", ports[1])
		tb.listsLog = filepath.Join(srvDir, "lists.log")
		listDocs := filepath.Join(root, "docs-lists")
		small := t.files[:t.small]
		if err := writeListDocs(listDocs, tb.lists, "md5", small, tb.cfg.perList); err != nil {
			return err
		}
		tb.listDocs = 3 + (len(small)+tb.cfg.perList-1)/tb.cfg.perList // description, capability list, index and the lists
		if len(small) <= tb.cfg.perList {
			tb.listDocs = 3
		}
		zone++
		servers = append(servers, throttleServer{Port: ports[1], Rate: 2, Burst: 1, Status: 429, Zone: fmt.Sprintf("rs%d", zone),
			Log: tb.listsLog, WWW: t.www, Docs: listDocs, plain: true})
	}
	tb.srv, err = startThrottleNginx(srvDir, servers, cert, key)
	return err
}

// startThrottleNginx writes the configuration and runs nginx as a child
// of the bench; it returns once every plain port answers.
func startThrottleNginx(dir string, servers []throttleServer, cert, key string) (*nginxServer, error) {
	s := &nginxServer{dir: dir, errorLog: filepath.Join(dir, "error.log"), ports: map[string]int{}, done: make(chan error, 1)}
	var conf bytes.Buffer
	err := throttleConf.Execute(&conf, struct {
		Dir, ErrorLog, Cert, Key string
		Servers                  []throttleServer
	}{dir, s.errorLog, cert, key, servers})
	if err != nil {
		return nil, fmt.Errorf("nginx.conf: %w", err)
	}
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, conf.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("nginx.conf: %w", err)
	}
	for _, sv := range servers {
		if sv.plain {
			s.ports[strconv.Itoa(sv.Port)] = sv.Port
		}
	}
	s.cmd = exec.Command("nginx", "-p", dir, "-c", confPath, "-e", s.errorLog)
	s.cmd.Stderr = os.Stderr
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start nginx: %w", err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	if err := s.waitServing(); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// mountArgs are the flags of every throttle mount of url.
func (tb *throttleBench) mountArgs(url string, extra ...string) []string {
	args := []string{"--poll-interval", "0"}
	if strings.HasPrefix(url, "https:") {
		args = append(args, "--ca-cert", tb.cert)
	}
	return append(append(args, extra...), tb.cfg.flags...)
}

// throttleMount is a live mount (or what is left of a failed one).
type throttleMount struct {
	dir, cacheDir, exe string
	pid                int
	ready              float64
}

// mountFresh mounts bin on a fresh directory with a fresh cache directory,
// stopping the mount command after limit: a mount that does not come up is
// a result, and whatever it left is cleaned away.
func (tb *throttleBench) mountFresh(bin, url, logName string, limit time.Duration, args []string) (*throttleMount, error) {
	dir, err := os.MkdirTemp(tb.tmp, "mnt")
	if err != nil {
		return nil, err
	}
	m := &throttleMount{dir: dir, cacheDir: dir + ".cache", exe: filepath.Base(bin)}
	full := append([]string{"mount", url, dir, "--log-file", filepath.Join(tb.tmp, logName+".log"), "--cache-dir", m.cacheDir}, args...)
	out, err := os.CreateTemp(tb.tmp, "mount-out")
	if err != nil {
		return nil, err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, full...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err = cmd.Run()
	m.ready = time.Since(start).Seconds()
	if err != nil {
		text, _ := os.ReadFile(out.Name())
		msg := lastLine(string(text))
		if ctx.Err() != nil {
			msg = fmt.Sprintf("not mounted after %s", limit)
		} else if msg == "" {
			msg = err.Error()
		}
		m.pid, _ = pidServing(dir, m.exe)
		m.unmount()
		return nil, errors.New(msg)
	}
	if m.pid, err = pidServing(dir, m.exe); err != nil {
		m.unmount()
		return nil, err
	}
	return m, nil
}

// unmount unmounts (detaching a mount that will not go), ends the mount's
// process if it lingers, and removes the directories.
func (m *throttleMount) unmount() {
	var err error
	for try := 0; try < 20; try++ {
		if err = exec.Command("umount", m.dir).Run(); err == nil {
			break
		}
		if !isMountPoint(m.dir) {
			err = nil
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		_ = syscall.Unmount(m.dir, syscall.MNT_DETACH)
	}
	if m.pid > 0 {
		done := make(chan struct{})
		go func() { waitExit(m.pid); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(m.pid, syscall.SIGKILL) // the mount process this bench started
		}
	}
	os.RemoveAll(m.cacheDir)
	os.Remove(m.dir)
}

func isMountPoint(dir string) bool {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == dir {
			return true
		}
	}
	return false
}

// shellResult is a command's outcome: its output, time, and why it failed.
type shellResult struct {
	stdout, stderr string
	secs           float64
	err            string
	timedOut       bool
}

func runShell(limit time.Duration, script string) shellResult {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	r := shellResult{stdout: stdout.String(), stderr: stderr.String(), secs: time.Since(start).Seconds()}
	if ctx.Err() != nil {
		r.timedOut, r.err = true, fmt.Sprintf("stopped after %s", limit)
	} else if err != nil {
		r.err = failure(err, r.stderr)
	}
	return r
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// logSize is where an access log ends now (0 if there is none yet).
func logSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// readLog reads the access log's entries from offset on, once nginx has
// had a moment to log the last requests.
func readLog(path string, offset int64) []logEntry {
	time.Sleep(200 * time.Millisecond)
	data, err := os.ReadFile(path)
	if err != nil || offset > int64(len(data)) {
		return nil
	}
	return parseThrottleLog(string(data[offset:]))
}

// measure mounts a client on a fresh cache directory, greps every small
// file, and reads the large one through sha256sum.
func (tb *throttleBench) measure(c throttleCase, cl throttleClient) {
	log.Printf("throttle: %s, %d r/s, status %d: %s", protoNames[c.proto], c.rate, c.status, cl.name)
	r := throttleResult{c: c, client: cl.name}
	time.Sleep(2 * time.Second) // the bucket of the run before drains (burst/rate is at most 0.5 s)
	mark := logSize(c.log)
	m, err := tb.mountFresh(cl.bin, c.url, fmt.Sprintf("throttle-%s-%s-%d-%d", cl.name, c.proto, c.rate, c.status),
		5*time.Minute, tb.mountArgs(c.url))
	if err != nil {
		r.mountErr = err.Error()
		r.reqs = countLog(readLog(c.log, mark))
		tb.results = append(tb.results, r)
		log.Printf("throttle: mount failed: %s (%s)", r.mountErr, r.reqs)
		return
	}
	defer m.unmount()
	r.ready = m.ready
	ideal := float64(tb.tree.small) / float64(c.rate)
	limit := time.Duration((tb.cfg.timeScale*ideal + 60) * float64(time.Second))
	g := runShell(limit, fmt.Sprintf("grep -r -l %s %s/data", needle, m.dir))
	r.grepSecs = g.secs
	r.matched = countLines(g.stdout)
	for _, line := range strings.Split(g.stderr, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		r.errs++
		if strings.Contains(line, "Input/output error") {
			r.eio++
		}
	}
	if g.timedOut {
		r.grepErr = g.err
	}
	afterGrep := logSize(c.log)
	entries := readLog(c.log, mark)
	r.reqs = countLog(entries)
	tb.checkProto(c, cl, entries)
	if tb.cfg.big > 0 {
		r.bigDone = true
		big := tb.tree.files[len(tb.tree.files)-1]
		s := runShell(5*time.Minute, "sha256sum "+filepath.Join(m.dir, bigRelPath))
		r.bigSecs = s.secs
		if s.err != "" {
			r.bigErr = s.err
		} else if f := strings.Fields(s.stdout); len(f) > 0 {
			r.bigOK = f[0] == big.SHA256
			if !r.bigOK {
				r.bigErr = "hash differs"
			}
		}
		r.bigReqs = countLog(readLog(c.log, afterGrep))
	}
	tb.results = append(tb.results, r)
	log.Printf("throttle: %s", strings.Join(tb.row(r), " | "))
}

// checkProto notes any request of an HTTP/2 case that came over another
// protocol (the client fell back to HTTP/1.1).
func (tb *throttleBench) checkProto(c throttleCase, cl throttleClient, entries []logEntry) {
	if c.proto != "h2" {
		return
	}
	other := 0
	for _, e := range entries {
		if e.proto != "HTTP/2.0" {
			other++
		}
	}
	if other > 0 {
		note := fmt.Sprintf("**%s at %d r/s, status %d: %d of %d requests came over HTTP/1.x, not HTTP/2.**", cl.name, c.rate, c.status, other, len(entries))
		tb.notes = append(tb.notes, note)
		log.Print(note)
	}
}

func countLines(s string) int {
	n := 0
	for _, line := range strings.Split(s, "\n") {
		if strings.TrimSpace(line) != "" {
			n++
		}
	}
	return n
}

// supports says whether bin's mount command knows a flag.
func supports(bin, flagName string) bool {
	out, _ := exec.Command(bin, "mount", "--help").CombinedOutput()
	return strings.Contains(string(out), "--"+flagName+" ")
}

func (tb *throttleBench) runExtras() {
	for _, cl := range tb.clients {
		if !cl.isNew {
			continue
		}
		tb.maxRateRow(cl)
		tb.bwLimitRow(cl)
	}
	for _, cl := range tb.clients {
		tb.listsRow(cl)
	}
}

// maxRateRow greps the small files of an unlimited Source with --max-rate
// 10 and reports the most requests nginx logged in any 1-s window.
func (tb *throttleBench) maxRateRow(cl throttleClient) {
	const rate = 10
	what := fmt.Sprintf("`--max-rate %d`, unlimited nginx, grep -r of %d files", rate, tb.openTree.small)
	target := fmt.Sprintf("≤ %d requests in any 1-s window", rate)
	if !supports(cl.bin, "max-rate") {
		tb.extras = append(tb.extras, throttleExtra{what, cl.name, "skipped: the binary has no --max-rate", target, "—"})
		return
	}
	log.Printf("throttle: %s: %s", cl.name, what)
	time.Sleep(time.Second)
	mark := logSize(tb.openLog)
	m, err := tb.mountFresh(cl.bin, tb.open, "throttle-maxrate", 5*time.Minute, tb.mountArgs(tb.open, "--max-rate", strconv.Itoa(rate)))
	if err != nil {
		tb.extras = append(tb.extras, throttleExtra{what, cl.name, "mount failed: " + esc(shorten(err.Error(), 120)), target, "no"})
		return
	}
	defer m.unmount()
	limit := time.Duration(float64(tb.openTree.small)/rate*3+60) * time.Second
	g := runShell(limit, fmt.Sprintf("grep -r -l %s %s/data", needle, m.dir))
	entries := readLog(tb.openLog, mark)
	var times []float64
	for _, e := range entries {
		times = append(times, e.start())
	}
	peak := maxInWindow(times, 1)
	res := fmt.Sprintf("at most %d requests in a 1-s window; %d requests in all, mount %.1f s, grep %s, %d of %d files matched, %d EIO",
		peak, len(entries), m.ready, fmtSecs(g.secs), countLines(g.stdout), tb.openTree.small, strings.Count(g.stderr, "Input/output error"))
	if g.timedOut {
		res += "; grep " + g.err
	}
	tb.extras = append(tb.extras, throttleExtra{what, cl.name, res, target, yesNo(peak <= rate)})
	log.Printf("throttle: %s", res)
}

// bwLimitRow reads the large file of an unlimited Source with --bwlimit
// 1MiB and reports the bytes nginx sent per second, over each 10-s window
// and overall.
func (tb *throttleBench) bwLimitRow(cl throttleClient) {
	const limitBps = 1 << 20
	what := fmt.Sprintf("`--bwlimit 1MiB`, unlimited nginx, cat of a %d MiB file", tb.cfg.bwSize>>20)
	target := "≤ 1.05 MiB/s"
	if tb.cfg.bwSize <= 0 {
		return
	}
	if !supports(cl.bin, "bwlimit") {
		tb.extras = append(tb.extras, throttleExtra{what, cl.name, "skipped: the binary has no --bwlimit", target, "—"})
		return
	}
	log.Printf("throttle: %s: %s", cl.name, what)
	m, err := tb.mountFresh(cl.bin, tb.open, "throttle-bwlimit", 5*time.Minute, tb.mountArgs(tb.open, "--bwlimit", "1MiB"))
	if err != nil {
		tb.extras = append(tb.extras, throttleExtra{what, cl.name, "mount failed: " + esc(shorten(err.Error(), 120)), target, "no"})
		return
	}
	defer m.unmount()
	mark := logSize(tb.openLog)
	wire := startWire(tb.open, 100*time.Millisecond)
	start := float64(time.Now().UnixNano()) / 1e9
	limit := time.Duration(float64(tb.cfg.bwSize)/limitBps*3+60) * time.Second
	s := runShell(limit, "cat "+filepath.Join(m.dir, bigRelPath)+" > /dev/null")
	end := start + s.secs
	wireWindows, wireBytes, wireSpan := wire.finish(10 * time.Second)
	var sent int64
	var entries []logEntry
	for _, e := range readLog(tb.openLog, mark) {
		if strings.HasPrefix(e.uri, "/"+filepath.Dir(bigRelPath)+"/") {
			entries = append(entries, e)
			sent += e.bytes
		}
	}
	overall := float64(sent) / s.secs / limitBps
	windows := bytesPerWindow(entries, start, end, 10)
	span := 10.0
	if len(windows) == 1 {
		span = min(span, s.secs) // a read shorter than a window: its own time
	}
	var ws []string
	peak := 0.0
	for _, w := range windows {
		ws = append(ws, fmt.Sprintf("%.2f", w/span/limitBps))
		peak = max(peak, w/span/limitBps)
	}
	// On the wire (the server's sockets' bytes_acked, wire.go), which is
	// what the limit is about; the access log's dates are early by what
	// the server's send buffer held.
	var wws []string
	wirePeak, wireOverall := 0.0, 0.0
	for _, w := range wireWindows {
		wws = append(wws, fmt.Sprintf("%.3f", w/10/limitBps))
		wirePeak = max(wirePeak, w/10/limitBps)
	}
	if wireSpan > 0 {
		wireOverall = float64(wireBytes) / wireSpan.Seconds() / limitBps
	}
	res := fmt.Sprintf("on the wire (the server's sockets' bytes acked): %.3f MiB/s overall (%s in %s); 10-s windows: %s MiB/s. "+
		"As the access log dates them (a response's end when its last byte entered the server's send buffer): %.2f MiB/s overall (%s in %s, %d requests); 10-s windows: %s MiB/s",
		wireOverall, fmtBytes(wireBytes), fmtSecs(wireSpan.Seconds()), strings.Join(wws, ", "),
		overall, fmtBytes(sent), fmtSecs(s.secs), len(entries), strings.Join(ws, ", "))
	if s.err != "" {
		res += "; cat failed: " + esc(shorten(s.err, 100))
	}
	_ = peak
	tb.extras = append(tb.extras, throttleExtra{what, cl.name, res, target + " on the wire", yesNo(s.err == "" && len(wireWindows) > 0 && wireOverall <= 1.05 && wirePeak <= 1.05)})
	log.Printf("throttle: %s", res)
}

// listsRow mounts a Source of many Resource Lists behind 2 r/s, burst 1.
func (tb *throttleBench) listsRow(cl throttleClient) {
	what := fmt.Sprintf("Resource Lists at load: %d documents, limit_req 2 r/s burst 1 (429), `--parallel 4`", tb.listDocs)
	target := "mounts; no request refused after the first 5"
	log.Printf("throttle: %s: %s", cl.name, what)
	time.Sleep(2 * time.Second)
	mark := logSize(tb.listsLog)
	m, err := tb.mountFresh(cl.bin, tb.lists, "throttle-lists-"+cl.name, 3*time.Minute, tb.mountArgs(tb.lists, "--parallel", "4"))
	entries := readLog(tb.listsLog, mark)
	slices.SortStableFunc(entries, func(a, b logEntry) int {
		return cmpFloat(a.start(), b.start())
	})
	n := countLog(entries)
	after := countLog(entries[min(5, len(entries)):])
	res := ""
	met := "no"
	if err != nil {
		res = "**did not mount** (" + esc(shorten(err.Error(), 240)) + ")"
	} else {
		res = fmt.Sprintf("mounted in %s", fmtSecs(m.ready))
		if after.refused == 0 {
			met = "yes"
		}
		m.unmount()
	}
	res += fmt.Sprintf("; %d requests, %d refused, %d of them after the first 5", n.total, n.refused, after.refused)
	tb.extras = append(tb.extras, throttleExtra{what, cl.name, res, target, met})
	log.Printf("throttle: %s", res)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// logEntry is one line of the throttle access log.
type logEntry struct {
	end, dur float64 // $msec and $request_time, in seconds
	status   int
	bytes    int64
	method   string
	uri      string
	proto    string // $server_protocol: HTTP/1.1, HTTP/2.0
}

// start is when the request arrived: nginx logs its end.
func (e logEntry) start() float64 { return e.end - e.dur }

func parseThrottleLog(text string) []logEntry {
	var out []logEntry
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 6 {
			continue
		}
		var e logEntry
		var err error
		if e.end, err = strconv.ParseFloat(f[0], 64); err != nil {
			continue
		}
		e.dur, _ = strconv.ParseFloat(f[1], 64)
		e.status, _ = strconv.Atoi(f[2])
		e.bytes, _ = strconv.ParseInt(f[3], 10, 64)
		e.method, e.uri = f[4], strings.Trim(f[5], `"`)
		if len(f) > 6 {
			e.proto = f[6]
		}
		out = append(out, e)
	}
	return out
}

// logCount is how many requests a server logged, and how many of them it
// refused (429 or 503, the statuses limit_req is given here).
type logCount struct{ total, refused int }

func (c logCount) String() string { return fmt.Sprintf("%d requests, %d refused", c.total, c.refused) }

func countLog(entries []logEntry) logCount {
	var c logCount
	for _, e := range entries {
		c.total++
		if e.status == 429 || e.status == 503 {
			c.refused++
		}
	}
	return c
}

// maxInWindow is the most times falling in any window [t, t+w) that
// starts at one of them.
func maxInWindow(times []float64, w float64) int {
	s := slices.Clone(times)
	slices.Sort(s)
	best, j := 0, 0
	for i := range s {
		for j < len(s) && s[j] < s[i]+w {
			j++
		}
		best = max(best, j-i)
	}
	return best
}

// bytesPerWindow spreads each entry's bytes evenly over its time
// (arrival to end, as nginx logged it) and sums them per window of w
// seconds from start; the last, partial window is left out unless it is
// the only one.
func bytesPerWindow(entries []logEntry, start, end, w float64) []float64 {
	n := int((end - start) / w)
	if n == 0 {
		n = 1
	}
	out := make([]float64, n)
	for _, e := range entries {
		a, b := e.start(), e.end
		for k := range out {
			lo, hi := start+float64(k)*w, start+float64(k+1)*w
			if b <= a { // no duration: all at its end
				if b >= lo && b < hi {
					out[k] += float64(e.bytes)
				}
				continue
			}
			if overlap := min(b, hi) - max(a, lo); overlap > 0 {
				out[k] += float64(e.bytes) * overlap / (b - a)
			}
		}
	}
	return out
}

// row is one result as the table's cells.
func (tb *throttleBench) row(r throttleResult) []string {
	files := tb.tree.small
	ideal := float64(files) / float64(r.c.rate)
	refusedPct := 0.0
	if r.reqs.total > 0 {
		refusedPct = 100 * float64(r.reqs.refused) / float64(r.reqs.total)
	}
	req := fmt.Sprintf("%d (%d refused, %.1f %%)", r.reqs.total, r.reqs.refused, refusedPct)
	head := []string{protoNames[r.c.proto], fmt.Sprintf("%d r/s", r.c.rate), strconv.Itoa(r.c.status), r.client}
	if r.mountErr != "" {
		return append(head, "**failed**: "+esc(shorten(r.mountErr, 120)), "—", "—", "—", req, "—", "—", "no (no mount)")
	}
	grep := fmtSecs(r.grepSecs)
	if r.grepErr != "" {
		grep += " (" + r.grepErr + ")"
	}
	ratioV := r.grepSecs / ideal
	big := "—"
	if r.bigDone {
		switch {
		case r.bigOK:
			big = fmt.Sprintf("yes, %s, %d req (%d refused)", fmtSecs(r.bigSecs), r.bigReqs.total, r.bigReqs.refused)
		default:
			big = fmt.Sprintf("**no**: %s (%s, %d req, %d refused)", esc(shorten(r.bigErr, 80)), fmtSecs(r.bigSecs), r.bigReqs.total, r.bigReqs.refused)
		}
	}
	var missed []string
	if r.eio > 0 || r.errs > 0 || r.matched != files || r.grepErr != "" {
		missed = append(missed, "unreadable files")
	}
	if ratioV > 1.25 {
		missed = append(missed, "time")
	}
	if refusedPct > 5 {
		missed = append(missed, "refusals")
	}
	met := "yes"
	if len(missed) > 0 {
		met = "no (" + strings.Join(missed, ", ") + ")"
	}
	return append(head, fmtSecs(r.ready), grep, fmt.Sprintf("%d / %d", r.matched, files),
		fmt.Sprintf("%d / %d", r.eio, r.errs), req, fmt.Sprintf("%.2f", ratioV), big, met)
}

func (tb *throttleBench) report() error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "## Throttle run: a Source that defends itself with nginx `limit_req` (issue 38)\n\n")
	fmt.Fprintf(&b, "`%s`\n\n", commandLine())
	fmt.Fprintf(&b, "rsfs built from %s", sourceRev())
	if tb.cfg.base != "" {
		fmt.Fprintf(&b, "; rsfs base is %s", tb.cfg.base)
	}
	fmt.Fprintf(&b, ".\nWritten by the tool on %s: %s, load average %s at the start and %s at the end.\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), hostDesc(), tb.loadFrom, loadAvg())
	fmt.Fprintf(&b, "Stock nginx serves %d files of %d bytes", tb.tree.small, tb.cfg.size)
	if tb.cfg.big > 0 {
		fmt.Fprintf(&b, " and one of %d MiB", tb.cfg.big>>20)
	}
	fmt.Fprintf(&b, " (md5 list), each case behind `limit_req_zone $binary_remote_addr zone=rsN:1m rate=R r/s` and "+
		"`limit_req zone=rsN burst=R/2 nodelay; limit_req_status S;` on every location, documents and files alike; "+
		"over HTTP/2 the limit and the access log are at the nginx TLS front the client talks to, which passes each request to an unlimited origin. "+
		"Each row is a fresh mount (fresh `--cache-dir`, `--poll-interval 0`), then `grep -r -l NEEDLE MOUNT/data` (the needle is on every file's last line)")
	if tb.cfg.big > 0 {
		fmt.Fprintf(&b, ", then `sha256sum` of the large file")
	}
	fmt.Fprintf(&b, ". Requests are what the server logged from the mount's start to grep's end (the documents too); refused is status 429 or 503. "+
		"The targets of the issue: no unreadable file, grep ≤ 1.25 × files ÷ rate, refused ≤ 5 %% of requests.\n\n")
	fmt.Fprintf(&b, "| protocol | rate | status | client | mount | grep -r | files matched | EIO / grep errors | requests (refused) | grep ÷ (files ÷ rate) | large file's sha256 right | targets met |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range tb.results {
		fmt.Fprintf(&b, "| %s |\n", strings.Join(tb.row(r), " | "))
	}
	for _, n := range tb.notes {
		fmt.Fprintf(&b, "\n%s\n", n)
	}
	if len(tb.extras) > 0 {
		fmt.Fprintf(&b, "\nExtra rows: `--max-rate` and `--bwlimit` (new binary only) against an unlimited nginx, request times from its access log (`$msec` less `$request_time`: when each request arrived; a request's bytes spread over its time); "+
			"and a mount of a Source whose Resource List is split under a Resource List Index, behind a tight limit.\n\n")
		fmt.Fprintf(&b, "| row | client | result | target | met |\n|---|---|---|---|---|\n")
		for _, e := range tb.extras {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", e.what, e.client, e.result, e.target, e.met)
		}
	}
	fmt.Fprintf(&b, "\n")
	fmt.Print("\n", b.String())
	if tb.cfg.out == "" {
		return nil
	}
	return upsertSection(tb.cfg.out, sectionKey(), b.String())
}
