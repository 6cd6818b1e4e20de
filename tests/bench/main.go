// Command bench measures rsfs end to end: it starts generated Sources on
// 127.0.0.1, mounts them with the real rsfs binary, runs the tools people
// use, and prints a table (also written to BENCHMARKS.md).
//
//	go run ./tests/bench -n 200000,1000000
//
// With -peer it instead serves a generated static tree and its ResourceSync
// documents from nginx and measures rsfs beside rclone's HTTP mount (see
// peer.go):
//
//	go run ./tests/bench -peer -peer-files 20000 -peer-big 512MiB
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"rsfs/resourcesync"
	"rsfs/tests/sourcetest"
)

func main() {
	if len(os.Args) == 4 && os.Args[1] == memFSArg {
		if err := serveMemFS(os.Args[2], os.Args[3]); err != nil {
			log.Fatal(err)
		}
		return
	}
	if len(os.Args) == 7 && os.Args[1] == streamFSArg {
		if err := serveStreamFS(os.Args[2], os.Args[3], os.Args[4], os.Args[5], os.Args[6]); err != nil {
			log.Fatal(err)
		}
		return
	}
	if len(os.Args) == 4 && os.Args[1] == getEachArg {
		if err := runGetEach(os.Args[2], os.Args[3]); err != nil {
			log.Fatal(err)
		}
		return
	}
	sizes := flag.String("n", "200000,1000000", "resource counts of the listing benchmarks, comma separated")
	bigSize := flag.Int64("big", 512<<20, "size of the sequential-read resource")
	smallFiles := flag.String("grep", "2000,20000", "small-file counts of the grep benchmarks")
	out := flag.String("out", "docs/BENCHMARKS.md", "where to write the table (empty: stdout only)")
	dumpFiles := flag.String("dumps", "10000", "small-resource counts of the dump vs URI benchmarks")
	mountFlags := flag.String("mount-flags", "", "extra flags for every rsfs mount, space separated")
	changes := flag.Int("changes", 10, "changes timed from the Source's update to a reader seeing it (0: none)")
	peer := flag.Bool("peer", false, "measure rsfs beside rclone on a static tree served by nginx, instead of the above")
	peerFiles := flag.Int("peer-files", 20000, "-peer: small files in the tree")
	peerSmall := flag.String("peer-small", "4KiB", "-peer: size of each small file")
	peerBig := flag.String("peer-big", "512MiB", "-peer: size of the large file (0: none)")
	peerReps := flag.Int("peer-reps", 3, "-peer: runs of each measure (the median is reported)")
	peerClients := flag.String("peer-clients", "rsfs,rsfs-sha256,rsfs-base,rclone,rclone-full",
		"-peer: mounts to measure, comma separated: rsfs, rsfs-sha256, rsfs-nocache, rsfs-base, rclone, rclone-full, memfs (the floor: the tree from memory, no network), streamfs (the streaming floor: memfs with the large file fetched by one GET and hashed with sha-256 as it is read)")
	baseMax := flag.Int("base-max", 0, "with -base, run the listing benchmarks with the other binary only at resource counts up to this (0: all)")
	base := flag.String("base", "", "another rsfs binary (e.g. built from main) measured in the same run: -peer mounts it as \"rsfs base\"; otherwise the listing benchmarks (-n) run again with it")
	warmServer := flag.Bool("peer-warm-server", true, "-peer: after dropping the page cache, read back the files nginx will send")
	peerDir := flag.String("peer-dir", "", "-peer: where to generate the tree (default: the bench's temporary directory)")
	peerServe := flag.Bool("peer-serve", false, "-peer: only serve the tree from nginx, print its URLs, and wait for an interrupt (for profiling by hand)")
	prebuiltBin := flag.String("rsfs", "", "an rsfs binary to measure instead of building the working tree (e.g. one built from a commit while the tree does not build)")
	latency := flag.String("latency", "", "measure grep -r over -latency-files small files behind a proxy that delays each request by each of these delays (e.g. 0,10ms,50ms,150ms), with and without a Resource Dump, instead of the above")
	latencyFiles := flag.Int("latency-files", 5000, "-latency: small files in the tree")
	latencyPerPackage := flag.Int("latency-per-package", defaultPerPackage, "-latency: small files per Resource Dump package")
	latencyShuffled := flag.Bool("latency-shuffled", false, "-latency: write the Resource Dump's members in a shuffled order, not the paths'")
	latencyReps := flag.Int("latency-reps", 3, "-latency: runs of each rsfs measure (the median is reported)")
	latencyPeersAt := flag.String("latency-peers-at", "50ms", "-latency: delays at which -base and rclone are measured too")
	latencyPeerReps := flag.Int("latency-peer-reps", 1, "-latency: runs of each -base and rclone measure")
	latencyRclone := flag.Bool("latency-rclone", true, "-latency: measure rclone mount too (false: as if -latency-clients left it out)")
	latencyClients := flag.String("latency-clients", "rsfs,rsfs-dump,base,base-dump,rclone", "-latency: mounts to measure, comma separated: rsfs, rsfs-dump, base, base-dump (these two with -base), rclone; empty: only the local walks")
	latencyLayouts := flag.String("layout", "flat", "-latency: layouts of the small files, comma separated: flat (200 files per directory), fanout (850 directories of about 6 files, two levels), items (BagIt-like items of 5 files)")
	latencyWalkers := flag.String("walkers", "grep", "-latency: walkers, comma separated: grep, rsync, tar, restic, warm (rsfs warm; rsfs clients only)")
	latencyProtos := flag.String("protocols", "h1", "-latency: protocols, comma separated: h1 (HTTP/1.1), h2 (HTTPS with HTTP/2, through an nginx front)")
	squidMounts := flag.Int("squid", 0, "measure N mounts behind one stock squid (shared-cache mode, docs/caches.md) instead of the above: Source requests while each greps -squid-files small files, then -squid-changes changes timed until every mount reads them (-base: the other binary too)")
	squidFiles := flag.Int("squid-files", 2000, "-squid: small files in the tree")
	squidReps := flag.Int("squid-reps", 3, "-squid: runs (the median is reported)")
	squidChanges := flag.Int("squid-changes", 4, "-squid: changes timed per run")
	squidPoll := flag.Duration("squid-poll", 10*time.Second, "-squid: --poll-interval of the mounts")
	squidCache := flag.String("cache", "squid", "-squid: the shared cache: squid (a forward proxy), nginx (proxy_cache with slice) or varnish (reverse proxies, tests/revcache)")
	throttle := flag.Bool("throttle", false, "measure what a new user sees of a Source behind stock nginx limit_req (issue 38): grep -r of -throttle-files small files at each of -throttle-rates and -throttle-status, over -protocols (default here h1,h2), instead of the above")
	throttleRates := flag.String("throttle-rates", "20,50,200", "-throttle: limit_req rates, requests per second, comma separated")
	throttleStatus := flag.String("throttle-status", "429,503", "-throttle: limit_req_status values, comma separated")
	throttleFiles := flag.Int("throttle-files", 2000, "-throttle: small files in the tree")
	throttleSize := flag.String("throttle-size", "2KiB", "-throttle: size of each small file")
	throttleBig := flag.String("throttle-big", "64MiB", "-throttle: size of the large file read with sha256sum after each grep (0: none)")
	throttleExtra := flag.Bool("throttle-extra", true, "-throttle: also the extra rows: --max-rate 10 and --bwlimit 1MiB against an unlimited nginx (new binary only), and Resource Lists at load behind 2 r/s")
	throttleMaxRateFiles := flag.Int("throttle-maxrate-files", 300, "-throttle: small files grepped in the --max-rate row")
	throttleBwSize := flag.String("throttle-bw-size", "64MiB", "-throttle: size of the file read in the --bwlimit row (0: no such row)")
	throttlePerList := flag.Int("throttle-per-list", 50, "-throttle: entries per Resource List of the Resource-Lists-at-load row")
	throttleTimeScale := flag.Float64("throttle-timeout", 3, "-throttle: a grep is stopped after this many times files ÷ rate, plus a minute")
	flag.Parse()

	b, err := newBench(*prebuiltBin)
	if err != nil {
		log.Fatal(err)
	}
	b.flags = strings.Fields(*mountFlags)
	defer b.cleanup()
	if *squidMounts > 0 {
		b.sharedCache(sharedCacheConfig{mounts: *squidMounts, files: *squidFiles, reps: *squidReps,
			changes: *squidChanges, poll: *squidPoll, base: *base, cache: *squidCache})
		b.report(*out)
		return
	}
	if *throttle {
		protos := []string{"h1", "h2"}
		flag.Visit(func(f *flag.Flag) {
			if f.Name == "protocols" {
				protos = strings.Split(*latencyProtos, ",")
			}
		})
		cfg := throttleConfig{rates: parseInts(*throttleRates), statuses: parseInts(*throttleStatus), protos: protos,
			files: *throttleFiles, size: parseSize(*throttleSize), big: parseSize(*throttleBig), extra: *throttleExtra,
			maxRate: *throttleMaxRateFiles, bwSize: parseSize(*throttleBwSize), perList: *throttlePerList,
			base: *base, dir: *peerDir, out: *out, flags: b.flags, timeScale: *throttleTimeScale}
		var err error
		for _, proto := range cfg.protos {
			if protoNames[proto] == "" {
				err = fmt.Errorf("-protocols: unknown protocol %q (h1, h2)", proto)
			}
		}
		for _, st := range cfg.statuses {
			if err == nil && (st < 400 || st > 599) {
				err = fmt.Errorf("-throttle-status: %d is not an error status", st)
			}
		}
		for _, r := range cfg.rates {
			if err == nil && r <= 0 {
				err = fmt.Errorf("-throttle-rates: %d is not a rate", r)
			}
		}
		if err == nil && cfg.perList <= 0 {
			err = fmt.Errorf("-throttle-per-list: %d", cfg.perList)
		}
		if err == nil {
			err = runThrottle(cfg, b.rsfs, b.tmp)
		}
		if err != nil {
			b.cleanup()
			log.Fatal(err)
		}
		return
	}
	if *peer {
		cfg := peerConfig{small: *peerFiles, smallSize: parseSize(*peerSmall), bigSize: parseSize(*peerBig),
			reps: *peerReps, clients: strings.Split(*peerClients, ","), base: *base, warmServer: *warmServer,
			dir: *peerDir, out: *out, flags: b.flags, serveOnly: *peerServe}
		if err := runPeer(cfg, b.rsfs, b.tmp); err != nil {
			b.cleanup()
			log.Fatal(err)
		}
		return
	}
	if *latency != "" {
		cfg := latencyConfig{delays: parseDurations(*latency), peersAt: parseDurations(*latencyPeersAt), files: *latencyFiles, perPkg: *latencyPerPackage, shuffled: *latencyShuffled,
			size: parseSize(*peerSmall), reps: *latencyReps, peerReps: *latencyPeerReps, base: *base,
			clients: strings.Split(*latencyClients, ","), protos: strings.Split(*latencyProtos, ","),
			dir: *peerDir, out: *out, flags: b.flags, warmSever: *warmServer}
		if !*latencyRclone {
			cfg.clients = slices.DeleteFunc(cfg.clients, func(c string) bool { return c == "rclone" })
		}
		var err error
		if cfg.layouts, err = parseLayouts(*latencyLayouts); err == nil {
			cfg.walkers, err = parseWalkers(*latencyWalkers)
		}
		for _, c := range cfg.clients {
			if err == nil && c != "" && !slices.Contains([]string{"rsfs", "rsfs-dump", "base", "base-dump", "rclone"}, c) {
				err = fmt.Errorf("-latency-clients: unknown mount %q (rsfs, rsfs-dump, base, base-dump, rclone; empty: only the local walks)", c)
			}
		}
		for _, proto := range cfg.protos {
			if err == nil && protoNames[proto] == "" {
				err = fmt.Errorf("-protocols: unknown protocol %q (h1, h2)", proto)
			}
		}
		if err == nil {
			warmBin = b.rsfs
			err = runLatency(cfg, b.rsfs, b.tmp)
		}
		if err != nil {
			b.cleanup()
			log.Fatal(err)
		}
		return
	}
	for _, n := range parseInts(*sizes) {
		b.listing(n)
		if *base != "" && (*baseMax == 0 || n <= *baseMax) { // the same, with the other binary, in the same run
			cur := b.rsfs
			b.rsfs, b.label = *base, ", base"
			b.listing(n)
			b.rsfs, b.label = cur, ""
		}
	}
	if *bigSize > 0 {
		b.sequential(*bigSize)
	}
	for _, n := range parseInts(*smallFiles) {
		b.grep(n)
	}
	for _, n := range parseInts(*dumpFiles) {
		b.dumps(n)
	}
	if *changes > 0 {
		b.follow(*changes)
	}
	b.report(*out)
}

type row struct{ section, what, value string }

type bench struct {
	tmp   string
	rsfs  string
	label string // appended to the listing sections: ", base" while -base runs
	flags []string
	rows  []row
}

func newBench(prebuilt string) (*bench, error) {
	tmp, err := os.MkdirTemp("", "rsfs-bench")
	if err != nil {
		return nil, err
	}
	b := &bench{tmp: tmp, rsfs: filepath.Join(tmp, "rsfs")}
	if prebuilt != "" {
		b.rsfs, prebuiltRsfs = prebuilt, prebuilt
		return b, nil
	}
	build := exec.Command("go", "build", "-o", b.rsfs, "rsfs/cmd/rsfs")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("build rsfs: %w", err)
	}
	return b, nil
}

func (b *bench) cleanup() { os.RemoveAll(b.tmp) }

func (b *bench) add(section, what, format string, args ...any) {
	v := fmt.Sprintf(format, args...)
	b.rows = append(b.rows, row{section, what, v})
	fmt.Printf("%-28s %-44s %s\n", section, what, v)
}

// mountAt mounts url on an existing directory (its cache dir beside it).
func (b *bench) mountAt(dir, url string, extra ...string) (string, time.Duration, int) {
	args := append([]string{"mount", url, dir, "--log-file", filepath.Join(b.tmp, "rsfs.log"),
		"--cache-dir", dir + ".cache"}, append(extra, b.flags...)...)
	start := time.Now()
	out, err := exec.Command(b.rsfs, args...).CombinedOutput()
	if err != nil {
		log.Fatalf("rsfs mount: %v: %s", err, out)
	}
	return dir, time.Since(start), pidOf(dir)
}

// mount mounts url on a fresh directory and returns it, the time the
// mount command took, and the server's pid.
func (b *bench) mount(url string, extra ...string) (string, time.Duration, int) {
	dir, err := os.MkdirTemp(b.tmp, "mnt")
	must(err)
	return b.mountAt(dir, url, extra...)
}

func (b *bench) unmount(dir string) {
	if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
		log.Printf("umount %s: %v %s", dir, err, out)
		_ = syscall.Unmount(dir, syscall.MNT_DETACH)
	}
}

// listing: time to ready, RSS, find and ls -lR over n resources.
func (b *bench) listing(n int) {
	sec := fmt.Sprintf("%d resources%s", n, b.label)
	// The Source keeps every list it rendered (about 210 bytes a
	// resource), so that time to ready is rsfs's, not the rendering's.
	src, err := sourcetest.Start(sourcetest.Config{Resources: n, PerList: 50000, DocCacheBytes: 256*n + 64<<20})
	must(err)
	defer src.Close()
	warmLists(src) // the Source computes hashes and renders lists on first serving: not rsfs's time
	b.coldReady(sec, src.URL())
	dir, _, pid := b.mount(src.URL())
	defer b.unmount(dir)
	b.add(sec, "RSS after mount", "%d MB", rssMB(pid))
	// Once the mount has done what follows a load (the snapshot's save,
	// the return of the load's garbage), what a resource costs at rest.
	untilIdle(pid)
	rss := rssMB(pid)
	b.add(sec, "RSS after mount, once idle", "%d MB (%d bytes a resource)", rss, rss<<20/int64(n))
	dropCaches()
	b.add(sec, "find DIR | wc -l, cold", "%.2f s (%s entries)", timeIt("sh", "-c", "find "+dir+" | wc -l"), countFind(dir))
	b.add(sec, "find DIR | wc -l, warm", "%.2f s", timeIt("sh", "-c", "find "+dir+" | wc -l"))
	b.add(sec, "RSS after find", "%d MB", rssMB(pid))
	b.add(sec, "find -size +0 (stat all)", "%.2f s", timeIt("sh", "-c", "find "+dir+" -size +0 | wc -l"))
	b.add(sec, "RSS after stat of every file", "%d MB", rssMB(pid))
	dropCaches()
	time.Sleep(time.Second)
	b.add(sec, "RSS after drop_caches", "%d MB", rssMB(pid))
	// The kernel's forgets come as it evicts, and at millions of inodes
	// go on seconds after drop_caches returns; rsfs returns the heap once
	// they stop (DESIGN §11).
	time.Sleep(9 * time.Second)
	b.add(sec, "RSS 10 s after drop_caches", "%d MB", rssMB(pid))
	b.add(sec, "ls -lR, cold", "%.2f s", timeIt("sh", "-c", "ls -lR "+dir+" > /dev/null"))

	b.unmount(dir)
	waitExit(pid)
	_, ready, pid := b.mountAt(dir, src.URL(), "--poll-interval", "1s")
	b.add(sec, "time to ready (from snapshot)", "%.2f s", ready.Seconds())
	b.idlePoll(sec, src, pid)
}

// coldReady times fresh mounts to ready, alternating the default (disk
// cache and snapshot under --cache-dir) with --cache-dir none, and adds
// the medians: the issue asks that remembering cost the first mount nothing.
func (b *bench) coldReady(sec, url string) {
	const reps = 3
	var on, off []float64
	for range reps {
		for _, none := range []bool{false, true} {
			var extra []string
			if none {
				extra = []string{"--cache-dir", "none"}
			}
			dropCaches()
			dir, ready, pid := b.mount(url, extra...)
			b.unmount(dir)
			waitExit(pid)
			if none {
				off = append(off, ready.Seconds())
			} else {
				on = append(on, ready.Seconds())
			}
		}
	}
	b.add(sec, "time to ready (cold)", "%.2f s (median of %d)", median(on), reps)
	b.add(sec, "time to ready (cold), --cache-dir none", "%.2f s (median of %d; default / none = %.2fx)",
		median(off), reps, median(on)/median(off))
}

// idlePoll measures what following costs while nothing changes: requests
// to the Source and CPU time of the mount, over several polls.
func (b *bench) idlePoll(sec string, src *sourcetest.Source, pid int) {
	const polls = 5
	time.Sleep(1500 * time.Millisecond)
	src.ResetCounters()
	cpu := cpuTime(pid)
	time.Sleep(polls * time.Second)
	c := src.Counters()
	used := cpuTime(pid) - cpu
	b.add(sec, "one poll with no change", "%.1f requests (%.1f answered 304), %.1f ms CPU",
		float64(c.Docs())/polls, float64(c.NotModified)/polls, used.Seconds()*1000/polls)
}

// sequential: a large resource through the mount vs curl, then again from
// the page cache; once with a sha-256 and once with an md5 published (rsfs
// verifies the hash of a whole-file read, so the md5 case is also compared
// with curl | md5sum).
func (b *bench) sequential(size int64) {
	for _, alg := range []string{"sha-256", "md5"} {
		sec := fmt.Sprintf("sequential %d MiB, %s", size>>20, alg)
		src, err := sourcetest.Start(sourcetest.Config{Resources: 1, MinSize: size, MaxSize: size, Hashes: []string{alg}})
		must(err)
		uri := src.Resources()[0].URI
		curl := timeIt("curl", "-s", "-o", "/dev/null", uri)
		tool := map[string]string{"sha-256": "sha256sum", "md5": "md5sum"}[alg]
		curlHash := timeIt("sh", "-c", "curl -s '"+uri+"' | "+tool)
		dir, _, _ := b.mount(src.URL())
		var file string
		_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode().IsRegular() {
				file = p
			}
			return nil
		})
		first := timeIt("sh", "-c", "cat '"+file+"' > /dev/null")
		second := timeIt("sh", "-c", "cat '"+file+"' > /dev/null")
		mb := float64(size) / 1e6
		b.add(sec, "curl", "%.0f MB/s", mb/curl)
		b.add(sec, "curl | "+tool, "%.0f MB/s", mb/curlHash)
		b.add(sec, "rsfs, first read (verified)", "%.0f MB/s (%.2f of curl, %.2f of curl | %s)", mb/first, curl/first, curlHash/first, tool)
		b.add(sec, "rsfs, second read (page cache)", "%.0f MB/s", mb/second)
		b.unmount(dir)
		src.Close()
	}
}

// grep: grep -r over n small files, twice, vs a local copy.
func (b *bench) grep(n int) {
	sec := fmt.Sprintf("grep -r, %d small files", n)
	src, err := sourcetest.Start(sourcetest.Config{Resources: n})
	must(err)
	defer src.Close()
	warmLists(src)
	dir, _, _ := b.mount(src.URL())
	defer b.unmount(dir)
	first := timeIt("sh", "-c", "grep -r NEEDLE-not-there "+dir+" || true")
	second := timeIt("sh", "-c", "grep -r NEEDLE-not-there "+dir+" || true")
	local := filepath.Join(b.tmp, fmt.Sprintf("local-%d", n))
	must(exec.Command("cp", "-r", dir, local).Run())
	_ = timeIt("sh", "-c", "grep -r NEEDLE-not-there "+local+" || true")
	localT := timeIt("sh", "-c", "grep -r NEEDLE-not-there "+local+" || true")
	b.add(sec, "first pass", "%.3f s (%.1fx local)", first, first/localT)
	b.add(sec, "second pass", "%.3f s (%.1fx local)", second, second/localT)
	b.add(sec, "local copy (page cache)", "%.3f s", localT)
}

// dumps reads n small resources through their URIs, then the same through
// a dump-only Source's packages: requests and time.
func (b *bench) dumps(n int) {
	sec := fmt.Sprintf("%d small resources", n)
	for _, kind := range []string{"URIs", "listed+dumps", "dump-only"} {
		cfg := sourcetest.Config{Resources: n}
		what := "through their URIs (no dumps)"
		switch kind {
		case "listed+dumps":
			cfg.Dumps, cfg.PerDump = true, 1000
			what = "listed and in dumps"
		case "dump-only":
			cfg.Dumps, cfg.DumpOnly, cfg.PerDump = true, true, 1000
			what = "only in dumps"
		}
		src, err := sourcetest.Start(cfg)
		must(err)
		warmLists(src)
		dir, _, _ := b.mount(src.URL())
		src.ResetCounters()
		took := timeIt("sh", "-c", "find "+dir+" -type f -exec cat {} + > /dev/null")
		c := src.Counters()
		requests := c.ContentGets() + c.DumpRanges + c.DumpWholeGets
		b.add(sec, what, "%.2f s, %d requests", took, requests)
		b.unmount(dir)
		src.Close()
	}
}

// follow times how long a change at the Source takes to reach a reader of
// the mount, polling every second: docs/following.md promises one poll interval.
// The e2e tests only bound this generously.
func (b *bench) follow(changes int) {
	const poll = time.Second
	sec := fmt.Sprintf("following, --poll-interval %s", poll)
	src, err := sourcetest.Start(sourcetest.Config{Resources: 1000})
	must(err)
	defer src.Close()
	dir, _, _ := b.mount(src.URL(), "--poll-interval", poll.String())
	defer b.unmount(dir)
	res := src.Resources()
	var took []time.Duration
	for i := 0; i < changes; i++ {
		r := res[i*len(res)/changes]
		p := filepath.Join(dir, strings.TrimPrefix(r.URI, src.URL()))
		_, err := os.ReadFile(p) // cached by the kernel and rsfs
		must(err)
		body := []byte(fmt.Sprintf("change %d\n", i))
		start := time.Now()
		must(src.Update(r.URI, body))
		for {
			got, err := os.ReadFile(p)
			if err == nil && bytes.Equal(got, body) {
				break
			}
			if time.Since(start) > time.Minute {
				log.Fatalf("change to %s not visible after a minute", p)
			}
			time.Sleep(10 * time.Millisecond)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.add(sec, "change visible after the Source's update", "median %.2f s, max %.2f s (%d changes)",
		took[len(took)/2].Seconds(), took[len(took)-1].Seconds(), changes)
}

// report prints the table and writes it as this command line's section of
// BENCHMARKS.md (the rest of the file is kept).
func (b *bench) report(path string) {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "## Run: `%s`\n\nWritten by the tool on %s: %s, load average %s at the end.\n\n",
		commandLine(), time.Now().UTC().Format("2006-01-02 15:04 MST"), hostDesc(), loadAvg())
	fmt.Fprintln(&buf, "| benchmark | measure | result |\n|---|---|---|")
	for _, r := range b.rows {
		esc := strings.NewReplacer("|", "\\|")
		fmt.Fprintf(&buf, "| %s | %s | %s |\n", esc.Replace(r.section), esc.Replace(r.what), esc.Replace(r.value))
	}
	if path != "" {
		must(upsertSection(path, sectionKey(), buf.String()))
	}
	fmt.Print("\n", buf.String())
}

// warmLists fetches every Resource List once so the Source's own
// first-serving cost (hashing generated bodies) is not counted against rsfs.
func warmLists(src *sourcetest.Source) {
	for k := 0; k < src.Sets(); k++ {
		doc := getDoc(src.ResourceListURL(k))
		if doc == nil || doc.Header.Root != resourcesync.SitemapIndex {
			continue
		}
		for _, e := range doc.Entries {
			getDoc(e.Loc)
		}
	}
}

// getDoc fetches and parses a document; nil if there is none.
func getDoc(url string) *resourcesync.Document {
	resp, err := http.Get(url)
	must(err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	doc, err := resourcesync.Parse(resp.Body, url, resourcesync.Options{})
	must(err)
	return doc
}

func timeIt(name string, args ...string) float64 {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout = io.Discard
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		log.Printf("%s %v: %v", name, args, err)
	}
	return time.Since(start).Seconds()
}

func countFind(dir string) string {
	out, _ := exec.Command("sh", "-c", "find "+dir+" | wc -l").Output()
	return strings.TrimSpace(string(out))
}

func dropCaches() {
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("2"), 0o200); err != nil {
		log.Printf("drop_caches: %v (needs root)", err)
	}
}

func pidOf(dir string) int {
	out, err := exec.Command("pgrep", "-f", " "+dir+" ").Output()
	if err != nil {
		log.Fatalf("no rsfs process for %s", dir)
	}
	pid, _ := strconv.Atoi(strings.Fields(string(out))[0])
	return pid
}

func rssMB(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	must(err)
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			kb, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return kb / 1024
		}
	}
	return -1
}

func hostDesc() string {
	out, _ := exec.Command("nproc").Output()
	return strings.TrimSpace(string(out)) + " cores"
}

func parseInts(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			n, err := strconv.Atoi(f)
			must(err)
			out = append(out, n)
		}
	}
	return out
}

// parseSize reads a byte count with an optional KiB, MiB or GiB suffix.
func parseSize(s string) int64 {
	mult := int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			s, mult = n, m
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		log.Fatalf("size %q: %v", s, err)
	}
	return n * mult
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// waitExit waits (up to a minute) for a process to end or be a zombie.
func waitExit(pid int) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return
		}
		if f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:])); len(f) == 0 || f[0] == "Z" {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cpuTime is a process's user+system CPU time, to the nanosecond for its
// live threads: /proc/PID/stat counts in clock ticks (10 ms), too coarse
// for a find that takes 30 ms, so each live thread's ticks are replaced by
// its scheduler run time (/proc/PID/task/TID/schedstat, in ns); the ticks
// of threads that have exited stay as the process's stat counts them.
func cpuTime(pid int) time.Duration {
	total, ok := statTicks(fmt.Sprintf("/proc/%d/stat", pid))
	if !ok {
		return 0
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	for _, task := range tasks {
		ticks, ok1 := statTicks(task + "/stat")
		ran, ok2 := schedRunTime(task + "/schedstat")
		if ok1 && ok2 {
			total += ran - ticks
		}
	}
	return total
}

// machineBusy is the CPU time every core has spent on anything but idling
// since boot (/proc/stat: user, nice, system, irq, softirq; not iowait,
// nor steal, which is the host's), in clock ticks: the server, the kernel's
// network and FUSE work, and the readers, which no process's own CPU shows.
func machineBusy() time.Duration {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0
	}
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7} { // user nice system irq softirq
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / 100
}

// statTicks reads utime+stime from a /proc stat file.
func statTicks(path string) (time.Duration, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100, err1 == nil && err2 == nil // clock ticks
}

// schedRunTime reads a thread's time on the CPU, in ns, from its schedstat.
func schedRunTime(path string) (time.Duration, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0, false
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	return time.Duration(ns), err == nil
}
