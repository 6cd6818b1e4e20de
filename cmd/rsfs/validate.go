package main

import (
	"math"
	"net"
	"net/url"
	"strings"
	"time"

	"rsfs/cache"
	"rsfs/origin"
	"rsfs/report"
)

// Ranges of the flags, checked before anything starts.
const (
	minBlockSize = 4 << 10  // --block-size: a page
	maxBlockSize = 16 << 20 // --block-size: one Range request per block
	// minCacheBlocks is how many blocks --cache-size holds at least.
	minCacheBlocks = 4
	// minPollInterval is the shortest --poll-interval but 0.
	minPollInterval = 100 * time.Millisecond
	maxParallel     = 256
	maxRetries      = 100
	maxID           = math.MaxUint32 - 1 // -1 (4294967295) is "no owner" to the kernel
	// minMaxRate is the lowest --max-rate but 0: one request a minute.
	minMaxRate = 1.0 / 60
	// minBwlimit is the lowest --bwlimit but 0.
	minBwlimit = 1 << 10
)

// validate checks the flags that reach a Source: every value in its
// range, before anything is fetched. Its errors are usage errors.
func (f *sourceFlags) validate() error {
	if f.timeout <= 0 {
		return usagef("--timeout %s: want a duration above 0 (e.g. 30s)", f.timeout)
	}
	if f.retries < 0 || f.retries > maxRetries {
		return usagef("--retries %d: want 0 (no retries) to %d", f.retries, maxRetries)
	}
	if f.parallel < 1 || f.parallel > maxParallel {
		return usagef("--parallel %d: want 1 to %d", f.parallel, maxParallel)
	}
	if f.maxDoc <= 0 {
		return usagef("--max-doc-size %d: want a number of bytes above 0", f.maxDoc)
	}
	if _, err := report.ParseSize(f.minRate); err != nil {
		return usagef("--min-rate: %w", err)
	}
	if f.maxRate < 0 || math.IsNaN(f.maxRate) || math.IsInf(f.maxRate, 0) {
		return usagef("--max-rate %v: want requests a second, 0 (no limit) or above (e.g. 10, or 0.5 for one every 2 s)", f.maxRate)
	}
	if f.maxRate > 0 && f.maxRate < minMaxRate {
		return usagef("--max-rate %v: want at least %v (one request a minute), or 0 for no limit", f.maxRate, minMaxRate)
	}
	if bw, err := report.ParseSize(f.bwlimit); err != nil {
		return usagef("--bwlimit: %w", err)
	} else if bw > 0 && bw < minBwlimit {
		return usagef("--bwlimit %s: want at least 1KiB a second, or 0 for no limit", f.bwlimit)
	}
	if strings.ContainsFunc(f.userAgent, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return usagef("--user-agent %q: want one line of printable text", f.userAgent)
	}
	for _, h := range f.allowHosts {
		u, err := url.Parse(h)
		if _, oerr := origin.Of(h); err != nil || oerr != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return usagef("--allow-host %q: want an origin, http(s)://host[:port] (e.g. https://mirror.example.org)", h)
		}
	}
	for _, h := range f.headers {
		name, _, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return usagef("--header %q: want \"Name: value\"", h)
		}
	}
	return nil
}

// validate checks every mount flag, before anything is mounted (or a
// background mount started), and parses the sizes. Its errors are usage
// errors.
func (mf *mountFlags) validate() error {
	if err := mf.sourceFlags.validate(); err != nil {
		return err
	}
	if err := mf.parseSizes(); err != nil {
		return asUsage(err)
	}
	s := mf.sizes
	block := s.block
	if mf.blockSize != "" {
		if block < minBlockSize || block > maxBlockSize || block&(block-1) != 0 {
			return usagef("--block-size %s: want a power of two from 4KiB to 16MiB", mf.blockSize)
		}
	} else {
		block = cache.DefaultBlockSize
	}
	if s.cache < minCacheBlocks*block {
		return usagef("--cache-size %s: want at least %s (%d blocks of --block-size)", mf.cacheSize, report.SizeArg(minCacheBlocks*block), minCacheBlocks)
	}
	if mf.verifyWholeSet && s.verifyWhole > s.cache/4 {
		return usagef("--verify-whole-below %s: want at most a quarter of --cache-size (%s), or 0 to stream every file", mf.verifyWhole, report.SizeArg(s.cache/4))
	}
	if s.disk != 0 && s.disk < block {
		return usagef("--cache-max-size %s: want 0 (no disk cache) or at least one block (%s)", mf.cacheMaxSize, report.SizeArg(block))
	}
	if mf.pollInterval < 0 || (mf.pollInterval > 0 && mf.pollInterval < minPollInterval) {
		return usagef("--poll-interval %s: want 0 (do not follow) or at least %s", mf.pollInterval, minPollInterval)
	}
	if mf.offlineWait < 0 {
		return usagef("--offline-wait %s: want a duration above 0 (default: one --timeout)", mf.offlineWait)
	}
	if mf.offline {
		mf.pollInterval = 0 // nothing is asked: no polls
		if mf.notifyAddr != "" {
			return usagef("--offline asks the Source nothing: no --notify-addr")
		}
	}
	if mf.offlineWait == 0 {
		mf.offlineWait = mf.timeout
	}
	if mf.readAhead < -1 {
		return usagef("--read-ahead %d: want -1 (off), 0 (the default) or a number of blocks", mf.readAhead)
	}
	if mf.uid < 0 || mf.uid > maxID {
		return usagef("--uid %d: want 0 to %d", mf.uid, maxID)
	}
	if mf.gid < 0 || mf.gid > maxID {
		return usagef("--gid %d: want 0 to %d", mf.gid, maxID)
	}
	if mf.readyTimeout <= 0 {
		return usagef("--ready-timeout %s: want a duration above 0", mf.readyTimeout)
	}
	if err := checkAddr("--metrics-addr", mf.metricsAddr); err != nil {
		return err
	}
	if err := checkAddr("--notify-addr", mf.notifyAddr); err != nil {
		return err
	}
	if mf.notifyURL != "" {
		if mf.notifyAddr == "" {
			return usagef("--notify-url needs --notify-addr")
		}
		u, err := url.Parse(mf.notifyURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usagef("--notify-url %q: want an http(s) URL (e.g. https://rsfs.example.org:8099/)", mf.notifyURL)
		}
	}
	return nil
}

// checkAddr checks a listen address, HOST:PORT.
func checkAddr(flag, addr string) error {
	if addr == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		return usagef("%s %q: want HOST:PORT (e.g. 127.0.0.1:9090; :0 picks a port)", flag, addr)
	}
	return nil
}

// checkSourceURL checks a Source's URL (origin.CheckURL): a usage error.
func checkSourceURL(raw string) error { return asUsage(origin.CheckURL(raw)) }

// checkMountArgs checks mount's two arguments, URL and DIR, before
// anything starts; arguments given the wrong way round are said to be.
func checkMountArgs(rawURL, dir string) error {
	err := checkSourceURL(rawURL)
	if err == nil {
		return nil
	}
	if checkSourceURL(dir) == nil {
		return usagef("%q is a URL and %q is not: the URL comes first (did you mean 'rsfs mount %s %s'?)", dir, rawURL, dir, rawURL)
	}
	return err
}
