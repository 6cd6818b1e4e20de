package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// summary is the median of a measure's samples, or why there is none.
type summary struct {
	secs, cpu float64
	busy      float64 // the whole machine's CPU seconds (sample.busy)
	req       requests
	err       string
	n         int
}

// summarize takes the median of samples; one failed sample fails them all.
func summarize(ss []sample) summary {
	if len(ss) == 0 {
		return summary{err: "not measured"}
	}
	for _, s := range ss {
		if s.err != "" {
			return summary{err: s.err, n: len(ss)}
		}
	}
	secs, cpu, busy := make([]float64, len(ss)), make([]float64, len(ss)), make([]float64, len(ss))
	tot, heads, ranged := make([]float64, len(ss)), make([]float64, len(ss)), make([]float64, len(ss))
	for i, s := range ss {
		secs[i], cpu[i], busy[i] = s.secs, s.cpu, s.busy
		tot[i], heads[i], ranged[i] = float64(s.req.total), float64(s.req.heads), float64(s.req.ranged)
	}
	return summary{secs: median(secs), cpu: median(cpu), busy: median(busy), n: len(ss),
		req: requests{total: int(median(tot)), heads: int(median(heads)), ranged: int(median(ranged))}}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func fmtSecs(s float64) string {
	if s < 0.1 {
		return fmt.Sprintf("%.3f s", s)
	}
	return fmt.Sprintf("%.2f s", s)
}

// cell is a client's figure for a measure: time, requests, mount CPU.
func (s summary) cell(withCPU bool) string {
	if s.err != "" {
		return "failed: " + shorten(s.err, 160)
	}
	out := fmtSecs(s.secs)
	if s.req.total > 0 || withCPU {
		out += fmt.Sprintf(", %d req", s.req.total)
		if s.req.heads > 0 {
			out += fmt.Sprintf(" (%d HEAD)", s.req.heads)
		}
		if s.req.ranged > 0 {
			out += fmt.Sprintf(" (%d ranged)", s.req.ranged)
		}
	}
	if withCPU {
		out += ", CPU " + fmtSecs(s.cpu)
	}
	return out
}

// refCell is a reference's figure: time, requests if any, and the CPU of
// the command and its children.
func (s summary) refCell() string {
	if s.err != "" {
		return "failed: " + shorten(s.err, 160)
	}
	out := fmtSecs(s.secs)
	if s.req.total > 0 {
		out += fmt.Sprintf(", %d req", s.req.total)
	}
	return out + ", CPU " + fmtSecs(s.cpu)
}

// ratio is a/b as "0.00x", or why there is none.
func ratio(a, b summary) string {
	switch {
	case a.err != "":
		return "no figure (failed)"
	case b.err != "":
		return "no figure (reference failed)"
	case b.secs <= 0:
		return "—"
	}
	return fmt.Sprintf("%.2fx", a.secs/b.secs)
}

func (p *peerBench) report(loadTo string) error {
	var b bytes.Buffer
	p.writeHeader(&b, loadTo)
	p.writeTimes(&b)
	p.writeRefs(&b)
	p.writeRatios(&b)
	p.writeCPU(&b)
	p.writeMem(&b)
	for _, n := range p.notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	fmt.Print("\n", b.String())
	if p.cfg.out == "" {
		return nil
	}
	return upsertSection(p.cfg.out, sectionKey(), b.String())
}

func (p *peerBench) writeHeader(b *bytes.Buffer, loadTo string) {
	fmt.Fprintf(b, "## Peer run: rsfs beside rclone, one nginx Source\n\n")
	fmt.Fprintf(b, "`%s`\n\n", commandLine())
	fmt.Fprintf(b, "rsfs built from %s", sourceRev())
	if p.cfg.base != "" {
		fmt.Fprintf(b, "; rsfs base is %s", p.cfg.base)
	}
	fmt.Fprintf(b, ".\n")
	fmt.Fprintf(b, "Written by the tool on %s: %s, load average %s at the start and %s at the end.\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), hostDesc(), p.loadFrom, loadTo)
	big := "no large file"
	if p.cfg.bigSize > 0 {
		big = fmt.Sprintf("one of %d bytes", p.cfg.bigSize)
	}
	fmt.Fprintf(b, "nginx serves %d files of %d bytes and %s from %s (md5 lists on one port, sha-256 on the other). ",
		p.tree.small, p.cfg.smallSize, big, fsType(p.tree.www))
	fmt.Fprintf(b, "Medians of %d; the page cache is dropped before every mount and every reference", p.cfg.reps)
	if p.cfg.warmServer {
		fmt.Fprintf(b, ", then the files the server will send are read back into it (only the client side is cold)")
	}
	fmt.Fprintf(b, ". Each mount has a fresh cache directory. A cell reads: time, requests nginx logged, CPU of the mount process (/proc/PID/stat, with each live thread's ticks replaced by its schedstat run time in ns). A failed command gives no figure.\n\n")
}

func (p *peerBench) clientNames() []string {
	var names []string
	for _, c := range p.clients {
		names = append(names, c.name)
	}
	return names
}

func (p *peerBench) writeTimes(b *bytes.Buffer) {
	names := p.clientNames()
	fmt.Fprintf(b, "| measure | %s |\n|---|%s\n", strings.Join(escAll(names), " | "), strings.Repeat("---|", len(names)))
	for _, ms := range []string{mReady, mFindCold, mFindWarm, mLsCold, mGrepFirst, mGrepSecond, mGrepAfter, mCatFirst, mCatSecond} {
		cells := []string{esc(ms)}
		seen := false
		for _, n := range names {
			ss, ok := p.times[n][ms]
			seen = seen || ok
			cells = append(cells, esc(summarize(ss).cell(ms != mReady)))
		}
		if seen {
			fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
		}
	}
	fmt.Fprintln(b)
}

// The references, in table order.
var refNames = []string{"grep -r local, disk cold", "grep -r local, warm", refCurlEach, refGetEach, "curl -s URL > /dev/null",
	"curl -s URL | openssl dgst -sha256", "curl -s URL | openssl dgst -md5", refHashSHA256, refHashMD5}

// The hash alone: Go's, over the large file's bytes in memory.
const (
	refHashSHA256 = "Go's sha-256 of the bytes in memory"
	refHashMD5    = "Go's md5 of the bytes in memory"
)

// refCurlEach is the HTTP side of the small-file floor: one curl fetching
// every small file over one connection.
const refCurlEach = "curl of each small file, one connection"

// sumOf names a synthetic reference: the sum of two references' medians
// (time and CPU), i.e. the floor of a reader that fetches, then serves.
func sumOf(a, b string) string { return "sum:" + a + "\x00" + b }

// slowerOf names a synthetic reference: the slower of two references'
// medians, i.e. what a read that overlaps wire and hash can approach.
func slowerOf(a, b string) string { return "max:" + a + "\x00" + b }

// coresFloor names a synthetic reference: the least time in which this
// machine's cores could do the work of all the parts at once, each part
// being work a reader of the mount cannot skip (receive the bytes, hash
// them, serve them through FUSE). It is the slowest part's time, or the
// parts' whole-machine CPU spread over every core, whichever is longer:
// perfect overlap, no CPU of its own. Issue 42 asks for this floor where a
// target is out of reach on 2 cores.
func coresFloor(parts ...string) string { return "floor:" + strings.Join(parts, "\x00") }

func (p *peerBench) writeRefs(b *bytes.Buffer) {
	fmt.Fprintf(b, "| reference | result |\n|---|---|\n")
	for _, r := range refNames {
		if ss, ok := p.refs[r]; ok {
			fmt.Fprintf(b, "| %s | %s |\n", esc(r), esc(summarize(ss).refCell()))
		}
	}
	fmt.Fprintln(b)
}

// target is a ratio the issue names: a measure over a reference.
type target struct{ measure, ref, goal string }

var targets = []target{
	{mGrepFirst, "grep -r local, disk cold", "≤ 1.5"},
	{mGrepSecond, "grep -r local, warm", "≤ 1.2"},
	{mCatFirst, "curl -s URL | openssl dgst -sha256", ""},
	{mCatFirst, "curl -s URL > /dev/null", ""},
	{mCatFirst, "curl -s URL | openssl dgst -md5", "≤ 1.2 (md5 list)"},
	{mCatFirst, slowerOf("curl -s URL > /dev/null", refHashSHA256), "≤ 1.5 (sha-256 list)"},
	{mCatFirst, slowerOf("curl -s URL > /dev/null", refHashMD5), ""},
	{mCatFirst, coresFloor("curl -s URL > /dev/null", refHashSHA256, "client:"+memFSName), "floor"},
	{mCatFirst, coresFloor("curl -s URL > /dev/null", refHashMD5, "client:"+memFSName), "floor"},
	{mGrepFirst, "client:" + memFSName, ""},
	{mGrepFirst, sumOf("client:"+memFSName, refCurlEach), "floor"},
	{mGrepFirst, refGetEach, ""},
	{mGrepFirst, slowerOf("client:"+memFSName, refGetEach), "floor"},
	{mGrepSecond, "client:" + memFSName, ""},
	{mCatFirst, "client:" + memFSName, ""},
	{mCatFirst, "client:" + streamFSName, "floor"},
	{mCatFirst, "client:rclone mount", "≤ 1"},
	{mFindCold, "client:rclone mount", ""},
	{mLsCold, "client:rclone mount", ""},
}

func (p *peerBench) refSummary(ref, measure string) (summary, bool) {
	if pair, ok := strings.CutPrefix(ref, "sum:"); ok {
		a, b, _ := strings.Cut(pair, "\x00")
		sa, okA := p.refSummary(a, measure)
		sb, okB := p.refSummary(b, measure)
		switch {
		case !okA || !okB:
			return summary{}, false
		case sa.err != "":
			return sa, true
		case sb.err != "":
			return sb, true
		}
		return summary{secs: sa.secs + sb.secs, cpu: sa.cpu + sb.cpu, busy: sa.busy + sb.busy, n: min(sa.n, sb.n)}, true
	}
	if parts, ok := strings.CutPrefix(ref, "floor:"); ok {
		return p.floorSummary(strings.Split(parts, "\x00"), measure)
	}
	if pair, ok := strings.CutPrefix(ref, "max:"); ok {
		a, b, _ := strings.Cut(pair, "\x00")
		sa, okA := p.refSummary(a, measure)
		sb, okB := p.refSummary(b, measure)
		if !okA || !okB {
			return summary{}, false
		}
		switch {
		case sa.err != "":
			return sa, true
		case sb.err != "" || sb.secs > sa.secs:
			return sb, true
		}
		return sa, true
	}
	ss, ok := p.samples(ref, measure)
	return summarize(ss), ok
}

// samples are a plain reference's samples, or a client's ("client:NAME")
// for measure.
func (p *peerBench) samples(ref, measure string) ([]sample, bool) {
	if c, ok := strings.CutPrefix(ref, "client:"); ok {
		ss, ok := p.times[c][measure]
		return ss, ok
	}
	ss, ok := p.refs[ref]
	return ss, ok
}

// floorSummary is coresFloor's figure: time max(slowest part, Σ busy /
// cores); CPU and whole-machine CPU the parts' sums. Each part counts by
// its least sample, not its median: a floor is the least the work needed,
// and a part's noise (a FUSE fs from memory took 0.24 s in one run and
// 0.45 s in the next) would lift it above what a client can reach.
func (p *peerBench) floorSummary(parts []string, measure string) (summary, bool) {
	var f summary
	for i, part := range parts {
		s, ok := p.leastOf(part, measure)
		switch {
		case !ok:
			return summary{}, false
		case s.err != "":
			return s, true
		}
		f.secs, f.cpu, f.busy = max(f.secs, s.secs), f.cpu+s.cpu, f.busy+s.busy
		if i == 0 || s.n < f.n {
			f.n = s.n
		}
	}
	f.secs = max(f.secs, f.busy/float64(p.cores))
	return f, true
}

// leastOf is a reference's or a client's least time, CPU and machine CPU
// over its samples of measure (each its own least); a failed sample fails
// it.
func (p *peerBench) leastOf(ref, measure string) (summary, bool) {
	ss, ok := p.samples(ref, measure)
	if !ok {
		return summary{}, false
	}
	s := summarize(ss)
	if s.err != "" {
		return s, true
	}
	for i, x := range ss {
		if i == 0 || x.secs < s.secs {
			s.secs = x.secs
		}
		if i == 0 || x.cpu < s.cpu {
			s.cpu = x.cpu
		}
		if i == 0 || x.busy < s.busy {
			s.busy = x.busy
		}
	}
	return s, true
}

func (p *peerBench) writeRatios(b *bytes.Buffer) {
	names := p.clientNames()
	fmt.Fprintf(b, "| ratio | target | %s |\n|---|---|%s\n", strings.Join(escAll(names), " | "), strings.Repeat("---|", len(names)))
	for _, t := range targets {
		ref, ok := p.refSummary(t.ref, t.measure)
		if !ok {
			continue
		}
		refName := refLabel(t.ref)
		if strings.HasPrefix(t.ref, "client:") {
			refName += "'s " + t.measure
		}
		cells := []string{esc(t.measure + " / " + refName), esc(t.goal)}
		for _, n := range names {
			cells = append(cells, ratio(summarize(p.times[n][t.measure]), ref))
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintln(b)
}

func (p *peerBench) writeMem(b *bytes.Buffer) {
	// After grep is read once the mount is idle (its writes done); after
	// cat both at once and once idle (a read burst's garbage returned).
	groups := []string{"after find", "after ls -lR", "after grep", "after cat", "after cat, idle"}
	labels := []string{"after find", "after ls -lR", "after grep, idle", "after cat", "after cat, idle"}
	fmt.Fprintf(b, "| mount process, VmRSS / VmHWM (median) | %s |\n|---|%s\n", strings.Join(labels, " | "), strings.Repeat("---|", len(groups)))
	for _, n := range p.clientNames() {
		cells := []string{esc(n)}
		for _, g := range groups {
			cells = append(cells, memCell(p.mem[n][g]))
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintln(b)
}

func memCell(ms []memSample) string {
	if len(ms) == 0 {
		return "—"
	}
	rss, hwm := make([]float64, len(ms)), make([]float64, len(ms))
	for i, m := range ms {
		rss[i], hwm[i] = float64(m.rss), float64(m.hwm)
	}
	return fmt.Sprintf("%.0f / %.0f MiB", median(rss), median(hwm))
}

func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func esc(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

func escAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = esc(s)
	}
	return out
}

// sectionKey names a run's block of BENCHMARKS.md by its flags (less -out):
// running the same command again replaces its figures, another command
// gets a block of its own.
func sectionKey() string {
	var keep []string
	args := os.Args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-out" || a == "--out" {
			i++
			continue
		}
		if strings.HasPrefix(a, "-out=") || strings.HasPrefix(a, "--out=") {
			continue
		}
		keep = append(keep, strings.ReplaceAll(a, "--", "- -"))
	}
	return strings.TrimSpace("run " + strings.Join(keep, " "))
}

func commandLine() string {
	args := make([]string, len(os.Args)-1)
	for i, a := range os.Args[1:] {
		args[i] = a
		if strings.ContainsAny(a, " |'\"") || a == "" {
			args[i] = strconv.Quote(a)
		}
	}
	return strings.TrimSpace("go run ./tests/bench " + strings.Join(args, " "))
}

// prebuiltRsfs is the binary -rsfs names, if any.
var prebuiltRsfs string

// sourceRev is the commit rsfs was built from, marked when the tree has
// uncommitted changes.
func sourceRev() string {
	if prebuiltRsfs != "" {
		return "the binary " + prebuiltRsfs + " (-rsfs)"
	}
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "an unknown commit"
	}
	rev := "commit " + strings.TrimSpace(string(out))
	// BENCHMARKS.md itself is what runs change.
	if exec.Command("git", "diff", "--quiet", "HEAD", "--", ".", ":!docs/BENCHMARKS.md").Run() != nil {
		rev += " with uncommitted changes"
	}
	return rev
}

func fsType(path string) string {
	out, err := exec.Command("df", "--output=fstype", path).Output()
	if err != nil {
		return "disk"
	}
	f := strings.Fields(string(out))
	return f[len(f)-1]
}

const howToRun = `How to run (as root, on a quiet machine). Everything below is written by the tool, with its
command line and date; nothing is edited by hand.

    go run ./tests/bench -peer                                  # rsfs beside rclone on one nginx Source: 20,000 × 4 KiB and 512 MiB, medians of 3
    go run ./tests/bench -peer -peer-files 2000 -peer-big 64MiB # a quick check
    go run ./tests/bench -peer -base /var/tmp/rsfs-main        # adds a "before" rsfs binary to the same run
    go run ./tests/bench -latency 0,10ms,50ms,150ms -base /var/tmp/rsfs-main # grep -r of 5,000 small files with each request delayed, with and without a Resource Dump
    go run ./tests/bench -latency 50ms -layout flat,fanout,items -walkers grep,rsync,tar,restic -protocols h1,h2 # every layout, walker and protocol (needs rsync, restic)
    go run ./tests/bench -squid 2 -base /var/tmp/rsfs-main     # 2 mounts behind one stock squid: Source requests while each greps 2,000 small files, and changes timed (needs squid)
    go run ./tests/bench -throttle -base /var/tmp/rsfs-main    # a Source behind stock nginx limit_req: grep -r of 2,000 small files at 20, 50 and 200 r/s, 429 and 503, HTTP/1.1 and HTTP/2
    go run ./tests/bench                                        # listing, sequential, grep, dumps and following against the Go test Source

The peer mode needs Debian's nginx and rclone (fusermount3); ` + "`-peer-clients`" + ` picks the mounts
(rsfs, rsfs-sha256, rsfs-nocache, rsfs-base, rclone, rclone-full; memfs: the floor, the same tree served from memory by a
minimal go-fuse file system with rsfs's mount options; streamfs: the streaming floor, memfs whose large file comes from one GET
of the sha-256 port and is hashed with Go's sha-256 as it is read, through a 16 MiB ring).
`

// upsertSection writes content into path between the markers named name,
// replacing what was there; a new section goes before the first "## "
// heading. The how-to-run block under the title is kept up to date too.
func upsertSection(path, name, content string) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("write %s: %w", path, err)
	}
	doc := string(old)
	if doc == "" {
		doc = "# rsfs benchmarks\n"
	}
	doc = replaceBlock(doc, "how to run", howToRun, afterTitle)
	doc = replaceBlock(doc, name, content, beforeFirstSection)
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func blockMarkers(name string) (string, string) {
	return "<!-- tests/bench " + name + ": begin -->\n", "<!-- tests/bench " + name + ": end -->\n"
}

// replaceBlock replaces the marked block, or inserts it where at says.
func replaceBlock(doc, name, content string, at func(string) int) string {
	begin, end := blockMarkers(name)
	block := begin + content
	if !strings.HasSuffix(block, "\n") {
		block += "\n"
	}
	block += end
	if i := strings.Index(doc, begin); i >= 0 {
		if j := strings.Index(doc[i:], end); j >= 0 {
			return doc[:i] + block + doc[i+j+len(end):]
		}
	}
	i := at(doc)
	return doc[:i] + block + "\n" + doc[i:]
}

func afterTitle(doc string) int {
	if strings.HasPrefix(doc, "# ") {
		if i := strings.Index(doc, "\n"); i >= 0 {
			j := i + 1
			for j < len(doc) && doc[j] == '\n' {
				j++
			}
			return j
		}
	}
	return 0
}

// beforeFirstSection is where the first "## " heading or tool-written
// block below the how-to-run block starts.
func beforeFirstSection(doc string) int {
	from := 0
	if _, end := blockMarkers("how to run"); strings.Contains(doc, end) {
		from = strings.Index(doc, end) + len(end)
	}
	best := len(doc)
	for _, s := range []string{"\n## ", "\n<!-- tests/bench "} {
		if i := strings.Index(doc[from:], s); i >= 0 {
			best = min(best, from+i+1)
		}
	}
	return best
}

// refLabel is how a target's reference reads in the ratio table.
func refLabel(ref string) string {
	if parts, ok := strings.CutPrefix(ref, "floor:"); ok {
		labels := strings.Split(parts, "\x00")
		for i, l := range labels {
			labels[i] = "(" + refLabel(l) + ")"
		}
		return "the floor, over every core, of " + strings.Join(labels, ", ")
	}
	if pair, ok := strings.CutPrefix(ref, "max:"); ok {
		a, b, _ := strings.Cut(pair, "\x00")
		return "the slower of (" + refLabel(a) + ") and (" + refLabel(b) + ")"
	}
	if pair, ok := strings.CutPrefix(ref, "sum:"); ok {
		a, b, _ := strings.Cut(pair, "\x00")
		return "(" + refLabel(a) + ") + (" + refLabel(b) + ")"
	}
	return strings.TrimPrefix(ref, "client:")
}

// writeCPU is the CPU per unit of work (issue 42): of the mount process
// per small file in grep's first pass and per MiB in cat's first read; of
// the references per file (curl of each) and per MiB (curl, the hashes);
// and the whole machine's CPU over the large file's first read (server,
// kernel, reader: what coresFloor spreads over the cores).
func (p *peerBench) writeCPU(b *bytes.Buffer) {
	mib := float64(p.cfg.bigSize) / (1 << 20)
	perFile := func(s summary) string {
		if s.err != "" || p.tree.small == 0 {
			return "—"
		}
		return fmt.Sprintf("%.0f µs", s.cpu/float64(p.tree.small)*1e6)
	}
	perMiB := func(s summary) string {
		if s.err != "" || mib == 0 {
			return "—"
		}
		return fmt.Sprintf("%.2f ms", s.cpu/mib*1e3)
	}
	machine := func(s summary) string {
		if s.err != "" || mib == 0 {
			return "—"
		}
		return fmtSecs(s.busy)
	}
	fmt.Fprintf(b, "| CPU (median) | per small file, grep -r first pass | per small file, after grep until idle | per MiB, first read of the large file | the whole machine, first read of the large file |\n|---|---|---|---|---|\n")
	for _, n := range p.clientNames() {
		s := summarize(p.times[n][mCatFirst])
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", esc(n), perFile(summarize(p.times[n][mGrepFirst])),
			perFile(summarize(p.times[n][mGrepAfter])), perMiB(s), machine(s))
	}
	for _, r := range refNames {
		ss, ok := p.refs[r]
		if !ok || strings.HasPrefix(r, "grep") {
			continue
		}
		s, file, big, all := summarize(ss), "—", "—", "—"
		if r == refCurlEach || r == refGetEach {
			file = perFile(s)
		} else {
			big, all = perMiB(s), machine(s)
		}
		fmt.Fprintf(b, "| %s | %s | — | %s | %s |\n", esc(r), file, big, all)
	}
	fmt.Fprintln(b)
}
