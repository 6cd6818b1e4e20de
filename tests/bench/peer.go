package main

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"
)

// peerConfig is what -peer measures.
type peerConfig struct {
	small      int
	smallSize  int64
	bigSize    int64
	reps       int
	clients    []string
	base       string // a second rsfs binary, mounted as "rsfs base"
	warmServer bool
	dir        string
	out        string
	flags      []string
	serveOnly  bool // serve the tree and wait for an interrupt; measure nothing
}

// The measures, in table order.
const (
	mReady      = "mount, to ready"
	mFindCold   = "find DIR | wc -l, cold"
	mFindWarm   = "find DIR | wc -l, warm"
	mLsCold     = "ls -lR DIR, cold"
	mGrepFirst  = "grep -r, first pass"
	mGrepSecond = "grep -r, second pass"
	mGrepAfter  = "after grep, until the mount is idle"
	mCatFirst   = "cat big file, first read"
	mCatSecond  = "cat big file, second read"
)

// sample is one timed command: no figure if err is set.
type sample struct {
	secs float64
	req  requests
	cpu  float64 // the mount process's CPU seconds (cpuTime) delta
	busy float64 // the whole machine's CPU seconds meanwhile (machineBusy)
	err  string
}

// memSample is a mount process's memory after a group of measures.
type memSample struct{ rss, hwm int64 }

type peerBench struct {
	cfg      peerConfig
	tmp      string
	tree     *peerTree
	srv      *nginxServer
	clients  []peerClient
	times    map[string]map[string][]sample    // client, measure
	mem      map[string]map[string][]memSample // client, after what
	refs     map[string][]sample               // reference, by name
	notes    []string
	loadFrom string
	cores    int // the machine's, for coresFloor
}

func runPeer(cfg peerConfig, rsfsBin, tmp string) error {
	p := &peerBench{cfg: cfg, tmp: tmp, times: map[string]map[string][]sample{},
		mem: map[string]map[string][]memSample{}, refs: map[string][]sample{}, loadFrom: loadAvg(),
		cores: runtime.NumCPU()}
	if err := p.setUp(rsfsBin); err != nil {
		return err
	}
	defer p.srv.stop()
	if cfg.serveOnly {
		return p.serve()
	}
	p.checkResync()
	for rep := range cfg.reps {
		p.references(rep)
		for _, c := range p.clients {
			p.runClient(c, rep)
		}
	}
	p.noteLoad()
	return p.report(loadAvg())
}

// noteLoad marks the run as noisy when the machine had more runnable work
// than half its cores when the run began. The reading at the end is only
// reported: it counts the run's own nginx, mounts and readers, which keep
// both cores busy on a machine that is otherwise idle.
func (p *peerBench) noteLoad() {
	cores := runtime.NumCPU()
	var one float64
	if _, err := fmt.Sscan(p.loadFrom, &one); err == nil && one > float64(cores)/2 {
		p.notes = append(p.notes, fmt.Sprintf("**The machine was loaded** (1-minute load average %.1f on %d cores when the run began): the figures are noisy; compare within the run.", one, cores))
	}
}

func (p *peerBench) setUp(rsfsBin string) error {
	root := p.cfg.dir
	if root == "" {
		root = filepath.Join(p.tmp, "peer")
	}
	start := time.Now()
	t, err := genTree(root, layouts["flat"], p.cfg.small, p.cfg.smallSize, p.cfg.bigSize)
	if err != nil {
		return err
	}
	p.tree = t
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	byAlg := map[string]int{"md5": ports[0], "sha-256": ports[1]}
	for alg, port := range byAlg {
		base := fmt.Sprintf("http://127.0.0.1:%d/", port)
		if err := t.writeDocs(filepath.Join(root, "docs-"+alg), base, alg); err != nil {
			return err
		}
	}
	log.Printf("peer: generated %d files in %s (%.1f s)", len(t.files), root, time.Since(start).Seconds())
	srvDir := filepath.Join(p.tmp, "nginx")
	if err := os.MkdirAll(srvDir, 0o755); err != nil {
		return err
	}
	if p.srv, err = startNginx(srvDir, t, byAlg, tlsFronts{}); err != nil {
		return err
	}
	p.clients = p.makeClients(rsfsBin)
	return nil
}

func (p *peerBench) makeClients(rsfsBin string) []peerClient {
	md5URL, shaURL := p.srv.url("md5"), p.srv.url("sha-256")
	logf := func(n string) string { return filepath.Join(p.tmp, n+".log") }
	var out []peerClient
	for _, name := range p.cfg.clients {
		switch name {
		case "rsfs":
			out = append(out, rsfsClient("rsfs (md5 list)", rsfsBin, md5URL, logf("rsfs-md5"), p.cfg.flags))
		case "rsfs-sha256":
			out = append(out, rsfsClient("rsfs (sha-256 list)", rsfsBin, shaURL, logf("rsfs-sha256"), p.cfg.flags))
		case "rsfs-nocache":
			flags := append([]string{}, p.cfg.flags...)
			out = append(out, rsfsNoCache(rsfsClient("rsfs --cache-dir none", rsfsBin, md5URL, logf("rsfs-none"), flags)))
		case "rsfs-base":
			if p.cfg.base != "" {
				out = append(out, rsfsClient("rsfs base (md5 list)", p.cfg.base, md5URL, logf("rsfs-base"), p.cfg.flags))
			}
		case "rclone":
			out = append(out, rcloneClient("rclone mount", md5URL, p.tmp))
		case "memfs":
			out = append(out, memFSClient(p.tree.www))
		case "streamfs":
			if big, ok := p.tree.file(bigRelPath); ok {
				out = append(out, streamFSClient(p.tree.www, shaURL, big.SHA256))
			}
		case "rclone-full":
			out = append(out, rcloneClient("rclone --vfs-cache-mode full", md5URL, p.tmp, "--vfs-cache-mode", "full"))
		default:
			log.Fatalf("-peer-clients: unknown client %q", name)
		}
	}
	return out
}

// rsfsNoCache mounts with --cache-dir none (the last --cache-dir wins).
func rsfsNoCache(c peerClient) peerClient {
	mount := c.mountFn
	c.mountFn = func(dir, cacheDir string) error {
		return mount(dir, "none")
	}
	return c
}

func (p *peerBench) checkResync() {
	if _, err := exec.LookPath("resync"); err != nil {
		p.notes = append(p.notes, "The `resync` reference client is not installed (Debian has no package): its baseline copy was skipped.")
		return
	}
	p.notes = append(p.notes, "`resync` is installed, but its baseline copy is not measured yet.")
}

// references times what the mounts are judged against: local grep on the
// served tree (disk cold, then warm) and curl of the large file.
func (p *peerBench) references(rep int) {
	grep := p.grepCmd(filepath.Join(p.tree.www, "data"))
	p.dropCaches()
	p.refs["grep -r local, disk cold"] = append(p.refs["grep -r local, disk cold"], p.timeCmd(0, grep))
	p.refs["grep -r local, warm"] = append(p.refs["grep -r local, warm"], p.timeCmd(0, grep))
	if conf, err := p.curlEachConfig(); err != nil {
		log.Printf("peer: %v", err)
	} else if conf != "" {
		p.warm("data")
		p.refs[refCurlEach] = append(p.refs[refCurlEach], p.timeCmd(0, "curl -sf --config '"+conf+"'"))
	}
	if cmd, err := p.getEachCmd(); err != nil {
		log.Printf("peer: %v", err)
	} else if cmd != "" {
		p.dropCaches() // the server as the mounts meet it
		p.warm("data")
		p.refs[refGetEach] = append(p.refs[refGetEach], p.timeCmd(0, cmd))
	}
	if p.cfg.bigSize == 0 {
		return
	}
	url := p.srv.url("md5") + bigRelPath
	for _, ref := range []struct{ name, cmd string }{
		{"curl -s URL > /dev/null", "curl -sf '" + url + "' > /dev/null"},
		{"curl -s URL | openssl dgst -sha256", "curl -sf '" + url + "' | openssl dgst -sha256 > /dev/null"},
		{"curl -s URL | openssl dgst -md5", "curl -sf '" + url + "' | openssl dgst -md5 > /dev/null"},
	} {
		p.dropCaches()
		p.warm(bigRelPath)
		p.refs[ref.name] = append(p.refs[ref.name], p.timeCmd(0, ref.cmd))
	}
	// The hash alone, Go's over the bytes in memory (issue 42's words): with
	// the wire alone (curl > /dev/null) it bounds what a read that hashes
	// beside the transfer can approach on a machine with cores to spare.
	data, err := os.ReadFile(filepath.Join(p.tree.www, bigRelPath))
	if err != nil {
		log.Printf("peer: %v", err)
		return
	}
	p.refs[refHashSHA256] = append(p.refs[refHashSHA256], timeHash(data, sha256.New()))
	p.refs[refHashMD5] = append(p.refs[refHashMD5], timeHash(data, md5.New()))
	// The bytes go back to the kernel now, not when the runtime gets to
	// them: on this machine a page a mount touches for the first time costs
	// more while the bench holds hundreds of MiB (a first read of the large
	// file took 0.73-1.28 s in the bench, 0.54 s beside it).
	data = nil
	debug.FreeOSMemory()
}

// timeHash times h over data on this goroutine's own thread: wall, the
// thread's CPU and the machine's.
func timeHash(data []byte, h hash.Hash) sample {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu, busy := threadCPU(), machineBusy()
	start := time.Now()
	h.Write(data)
	h.Sum(nil)
	return sample{secs: time.Since(start).Seconds(), cpu: (threadCPU() - cpu).Seconds(), busy: (machineBusy() - busy).Seconds()}
}

// threadCPU is the calling thread's user and system CPU time.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rusageThread is Linux's RUSAGE_THREAD, which package syscall does not name.
const rusageThread = 1

// curlEachConfig writes (once) a curl config that fetches every small file
// to /dev/null, in the tree's order: one curl, one connection, one GET per
// file, the HTTP side of the small-file floor. No small files: "".
func (p *peerBench) curlEachConfig() (string, error) {
	if p.tree.small == 0 {
		return "", nil
	}
	conf := filepath.Join(p.tmp, "curl-each.conf")
	if _, err := os.Stat(conf); err == nil {
		return conf, nil
	}
	var b strings.Builder
	base := p.srv.url("md5")
	for _, f := range p.tree.files[:p.tree.small] {
		fmt.Fprintf(&b, "url = \"%s%s\"\noutput = \"/dev/null\"\n", base, f.Path)
	}
	if err := os.WriteFile(conf, []byte(b.String()), 0o644); err != nil {
		return "", fmt.Errorf("curl config: %w", err)
	}
	return conf, nil
}

// getEachCmd writes (once) the list of small files and returns the floor
// client's command (geteach.go). No small files: "".
func (p *peerBench) getEachCmd() (string, error) {
	if p.tree.small == 0 {
		return "", nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("floor client: %w", err)
	}
	list := filepath.Join(p.tmp, "small-files.list")
	if _, err := os.Stat(list); err != nil {
		var b strings.Builder
		for _, f := range p.tree.files[:p.tree.small] {
			fmt.Fprintln(&b, f.Path)
		}
		if err := os.WriteFile(list, []byte(b.String()), 0o644); err != nil {
			return "", fmt.Errorf("floor client: %w", err)
		}
	}
	return fmt.Sprintf("'%s' %s '%s' '%s'", exe, getEachArg, p.srv.url("md5"), list), nil
}

// grepCmd greps the small files for the needle on their last line and
// checks every file had it: a short read is a failure, not a fast figure.
func (p *peerBench) grepCmd(dir string) string { return grepCmd(p.tree, dir) }

// runClient mounts c four times, each after dropping the page cache: find
// cold and warm, ls -lR cold, grep -r twice, cat of the large file twice.
func (p *peerBench) runClient(c peerClient, rep int) {
	log.Printf("peer: %s, run %d", c.name, rep+1)
	find := fmt.Sprintf("n=$(find DIR | wc -l) && test \"$n\" -eq %d || { echo \"find listed $n entries, want %d\" >&2; exit 1; }",
		p.tree.findEntries(), p.tree.findEntries())
	p.group(c, "find", "", []string{mFindCold, mFindWarm}, []string{find, find}, true)
	p.group(c, "ls -lR", "", []string{mLsCold}, []string{"ls -lR DIR > /dev/null"}, false)
	if p.tree.small > 0 {
		g := p.grepCmd("DIR/data")
		p.group(c, "grep", "data", []string{mGrepFirst, mGrepSecond}, []string{g, g}, false)
	}
	if p.cfg.bigSize > 0 {
		cat := "cat DIR/" + bigRelPath + " > /dev/null"
		p.group(c, "cat", bigRelPath, []string{mCatFirst, mCatSecond}, []string{cat, cat}, false)
	}
}

// group is one fresh mount: drop the page cache, warm what the server will
// read (unless -peer-warm-server=false), mount, run the commands in order
// (DIR replaced by the mount point), record memory, unmount.
func (p *peerBench) group(c peerClient, name, serverWarm string, measures, cmds []string, timeReady bool) {
	p.dropCaches()
	p.warm(serverWarm)
	m, err := mountClient(c, p.tmp)
	if err != nil {
		if timeReady {
			measures = append([]string{mReady}, measures...)
		}
		for _, ms := range measures {
			p.addTime(c.name, ms, sample{err: err.Error()})
		}
		return
	}
	if timeReady {
		p.addTime(c.name, mReady, sample{secs: m.ready.Seconds()})
	}
	for i, ms := range measures {
		p.addTime(c.name, ms, p.timeCmd(m.pid, strings.ReplaceAll(cmds[i], "DIR", m.dir)))
	}
	mem := func(what string) {
		if rss, hwm, err := procStatus(m.pid); err == nil {
			p.addMem(c.name, what, memSample{rss, hwm})
		}
	}
	if name == "grep" {
		p.addTime(c.name, mGrepAfter, untilIdle(m.pid))
	}
	mem("after " + name)
	if name == "cat" { // and once the mount is idle (grep's is: it waited above)
		untilIdle(m.pid)
		mem("after cat, idle")
	}
	if err := m.unmount(); err != nil {
		log.Printf("peer: %s: %v", c.name, err)
	}
}

// untilIdle is the work a mount does on its own after the reads (rsfs's
// disk writer, deferred until they pause): the CPU it takes, and how long
// until it uses less than 5 ms of CPU in each of two seconds running (2
// minutes at most).
func untilIdle(pid int) sample {
	start, cpu0 := time.Now(), cpuTime(pid)
	last, lastCPU := start, cpu0
	prev, quiet := cpu0, 0
	for quiet < 8 && time.Since(start) < 2*time.Minute {
		time.Sleep(250 * time.Millisecond)
		now := cpuTime(pid)
		if now-prev < 5*time.Millisecond/4 {
			quiet++
		} else {
			quiet, last, lastCPU = 0, time.Now(), now
		}
		prev = now
	}
	return sample{secs: last.Sub(start).Seconds(), cpu: (lastCPU - cpu0).Seconds()}
}

func (p *peerBench) addTime(client, measure string, s sample) {
	if p.times[client] == nil {
		p.times[client] = map[string][]sample{}
	}
	p.times[client][measure] = append(p.times[client][measure], s)
	if s.err != "" {
		log.Printf("peer: %s: %s: failed: %s", client, measure, s.err)
	}
}

func (p *peerBench) addMem(client, what string, s memSample) {
	if p.mem[client] == nil {
		p.mem[client] = map[string][]memSample{}
	}
	p.mem[client][what] = append(p.mem[client][what], s)
}

// timeCmd runs a shell command (pipefail) and times it, with the requests
// nginx logged meanwhile and the CPU the mount process (pid, if any) used.
func (p *peerBench) timeCmd(pid int, cmd string) sample {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	mark := p.srv.mark()
	cpu, busy := cpuTime(pid), machineBusy()
	var stderr strings.Builder
	sh := exec.CommandContext(ctx, "bash", "-c", "set -o pipefail; "+cmd)
	sh.Stderr = &stderr
	start := time.Now()
	err := sh.Run()
	secs := time.Since(start).Seconds()
	s := sample{secs: secs, cpu: (cpuTime(pid) - cpu).Seconds(), busy: (machineBusy() - busy).Seconds()}
	if pid == 0 && sh.ProcessState != nil { // a reference: the command's own CPU, its children's included
		s.cpu = (sh.ProcessState.UserTime() + sh.ProcessState.SystemTime()).Seconds()
	}
	time.Sleep(50 * time.Millisecond) // nginx logs a request once it is done
	s.req = p.srv.since(mark)
	if err != nil {
		s.err = failure(err, stderr.String())
	}
	return s
}

func failure(err error, stderr string) string {
	msg := strings.TrimSpace(stderr)
	if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
		msg = msg[i+1:]
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && msg != "" {
		return msg
	}
	return strings.TrimSpace(err.Error() + " " + msg)
}

// dropCaches empties the page cache, dentries and inodes. If the kernel
// refuses, the figures that follow are marked.
func (p *peerBench) dropCaches() {
	_ = exec.Command("sync").Run()
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0o200); err != nil {
		note := fmt.Sprintf("**The page cache could not be dropped (%v): the cold figures are not cold.**", err)
		if !contains(p.notes, note) {
			p.notes = append(p.notes, note)
			log.Print(note)
		}
	}
}

// warm reads rel (under the served tree) and the documents, and stats
// every file, so nginx serves from memory and only the client is cold.
func (p *peerBench) warm(rel string) {
	if !p.cfg.warmServer {
		return
	}
	if err := exec.Command("du", "-s", p.tree.www).Run(); err != nil {
		log.Printf("peer: stat the tree: %v", err)
	}
	paths := []string{}
	for _, d := range p.tree.docs {
		paths = append(paths, d)
	}
	if rel != "" {
		paths = append(paths, filepath.Join(p.tree.www, rel))
	}
	cmd := exec.Command("sh", "-c", `find "$@" -type f -exec cat {} + > /dev/null`, "warm")
	cmd.Args = append(cmd.Args, paths...)
	if out, err := cmd.CombinedOutput(); err != nil {
		log.Printf("peer: warming %v: %v %s", paths, err, out)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(data))[:3], " ")
}

// serve prints the URLs of the served tree and waits for SIGINT or SIGTERM.
func (p *peerBench) serve() error {
	fmt.Printf("md5 lists: %s\nsha-256 lists: %s\nlarge file: %s\naccess log: %s\n",
		p.srv.url("md5"), p.srv.url("sha-256"), bigRelPath, p.srv.accessLog)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	return nil
}
