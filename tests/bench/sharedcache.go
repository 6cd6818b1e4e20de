package main

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"rsfs/tests/revcache"
	"rsfs/tests/sourcetest"
	"rsfs/tests/squid"
)

// Shared-cache mode (-squid N, issue 23, docs/caches.md): N mounts behind
// one stock Debian squid (memory cache, the stock refresh rule), each
// grepping every small file of a Source reached through it; then changes
// at the Source, timed until every mount reads the new bytes, with the
// reads that failed on the way counted. With -base, the same with the
// other binary, in the same run.

type sharedCacheConfig struct {
	mounts, files, reps, changes int
	poll                         time.Duration
	base                         string
	cache                        string // squid (default), nginx or varnish (tests/revcache)
}

func (b *bench) sharedCache(cfg sharedCacheConfig) {
	if cfg.cache == "" {
		cfg.cache = "squid"
	}
	var host string
	if cfg.cache == "squid" {
		if squid.Binary() == "" {
			log.Fatal("-squid: squid is not installed (Debian: apt-get install squid)")
		}
		var err error
		host, err = squid.LoopbackName()
		must(err)
	} else if revcache.Binary(revcache.Kind(cfg.cache)) == "" {
		log.Fatalf("-cache %s: not installed", cfg.cache)
	}
	bins := []struct{ label, path string }{{"", b.rsfs}}
	if cfg.base != "" {
		bins = append(bins, struct{ label, path string }{", base", cfg.base})
	}
	for _, bin := range bins {
		cur := b.rsfs
		b.rsfs = bin.path
		var reqs, hits []float64
		var lat []time.Duration
		var eio, stale int
		for rep := 0; rep < cfg.reps; rep++ {
			r, h, l, e, s := b.sharedCacheOnce(cfg, host)
			reqs, hits = append(reqs, float64(r)), append(hits, h)
			lat = append(lat, l...)
			eio, stale = eio+e, stale+s
		}
		b.rsfs = cur
		sec := fmt.Sprintf("%d mounts behind %s%s", cfg.mounts, cfg.cache, bin.label)
		b.add(sec, fmt.Sprintf("Source content requests, each mount grepping %d small files", cfg.files),
			"median %.0f (of %d runs: %v)", median(reqs), cfg.reps, reqs)
		b.add(sec, cfg.cache+" hit ratio, content requests", "median %.1f%%", 100*median(hits))
		if len(lat) > 0 {
			slices.Sort(lat)
			b.add(sec, fmt.Sprintf("a change read by every mount, --poll-interval %s", cfg.poll),
				"median %.2f s, max %.2f s after the update (%d changes); reads failed on the way: %d; not seen within 90 s: %d",
				lat[len(lat)/2].Seconds(), lat[len(lat)-1].Seconds(), len(lat), eio, stale)
		}
	}
}

// sharedCacheOnce is one run: a fresh squid and Source, cfg.mounts mounts.
// It returns the Source's content requests during the greps, squid's hit
// ratio on content, the change latencies, the failed reads and the
// changes not seen.
func (b *bench) sharedCacheOnce(cfg sharedCacheConfig, host string) (int64, float64, []time.Duration, int, int) {
	if cfg.cache != "squid" {
		return b.revCacheOnce(cfg)
	}
	proxy, err := squid.Start(squid.Options{})
	must(err)
	defer proxy.Stop()
	src, err := sourcetest.Start(sourcetest.Config{Resources: cfg.files, Host: host})
	must(err)
	defer src.Close()
	for _, k := range []string{"HTTP_PROXY", "http_proxy"} {
		must(os.Setenv(k, proxy.URL))
		defer os.Unsetenv(k)
	}
	reqs, lat, eio, stale := b.sharedCacheRun(cfg, src)
	time.Sleep(500 * time.Millisecond) // squid writes its access log
	counts, lines, err := proxy.Log()
	must(err)
	hit, all := 0, 0
	for _, l := range lines {
		if !strings.Contains(l, "/data/") {
			continue
		}
		all++
		if strings.Contains(l, "_HIT/") {
			hit++
		}
	}
	log.Printf("squid: %v; Source content requests %d", counts, reqs)
	ratio := 0.0
	if all > 0 {
		ratio = float64(hit) / float64(all)
	}
	return reqs, ratio, lat, eio, stale
}

// revCacheOnce is sharedCacheOnce behind nginx or Varnish (tests/revcache,
// the docs/caches.md configurations), reached as the Source's URL.
func (b *bench) revCacheOnce(cfg sharedCacheConfig) (int64, float64, []time.Duration, int, int) {
	k := revcache.Kind(cfg.cache)
	port, err := revcache.FreePort()
	must(err)
	src, err := sourcetest.Start(sourcetest.Config{Resources: cfg.files, Base: fmt.Sprintf("http://127.0.0.1:%d/", port)})
	must(err)
	defer src.Close()
	c, err := revcache.Start(k, port, src.Addr())
	must(err)
	defer c.Stop()
	reqs, lat, eio, stale := b.sharedCacheRun(cfg, src)
	stats, err := c.Stats()
	must(err)
	hit, miss := stats["HIT"], stats["MISS"]+stats["EXPIRED"]
	if k == revcache.Varnish {
		hit, miss = stats["cache_hit"], stats["cache_miss"]
	}
	log.Printf("%s: %v; Source content requests %d", k, stats, reqs)
	ratio := 0.0
	if hit+miss > 0 {
		ratio = float64(hit) / float64(hit+miss)
	}
	return reqs, ratio, lat, eio, stale
}

// sharedCacheRun mounts cfg.mounts mounts of src, greps each, then times
// cfg.changes changes; it returns the Source's content requests during
// the greps, the change latencies, the failed reads and the changes not
// seen. The mounts are unmounted.
func (b *bench) sharedCacheRun(cfg sharedCacheConfig, src *sourcetest.Source) (int64, []time.Duration, int, int) {
	var dirs []string
	for i := 0; i < cfg.mounts; i++ {
		dir, _, _ := b.mount(src.URL(), "--poll-interval", cfg.poll.String())
		defer b.unmount(dir)
		dirs = append(dirs, dir)
	}
	src.ResetCounters()
	for _, dir := range dirs {
		timeIt("sh", "-c", "grep -r NEEDLE-not-there "+dir+" || true")
	}
	reqs := src.Counters().ContentGets()
	var lat []time.Duration
	var eio, stale int
	res := src.Resources()
	for i := 0; i < cfg.changes; i++ {
		r := res[(i*7919)%len(res)]
		rel := strings.TrimPrefix(r.URI, src.URL())
		old, _ := src.Body(r.URI)
		body := append(bytes.ToUpper(old[:len(old)-1]), '!') // the same length: only the hash tells
		if i%2 == 1 {
			body = []byte(fmt.Sprintf("change %d\n", i)) // another length
		}
		start := time.Now()
		must(src.Update(r.URI, body))
		seen := 0
		for _, dir := range dirs {
			p := filepath.Join(dir, rel)
			for {
				got, err := os.ReadFile(p)
				if err != nil {
					eio++
				}
				if err == nil && bytes.Equal(got, body) {
					seen++
					break
				}
				if time.Since(start) > 90*time.Second {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		if seen < len(dirs) {
			stale++
			continue
		}
		lat = append(lat, time.Since(start))
	}
	for _, dir := range dirs {
		b.unmount(dir)
	}
	return reqs, lat, eio, stale
}
