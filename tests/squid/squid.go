// Package squid starts a Debian squid on 127.0.0.1 for tests and
// benchmarks: a temporary configuration, a memory cache (or a disk one),
// logs in a temporary directory, the stock refresh rules. It also finds a
// host name for a Source on 127.0.0.1 that Go's HTTP client will send
// through the proxy.
package squid

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"rsfs/tests/daemon"
	"strconv"
	"strings"
	"time"
)

// Proxy is a running squid.
type Proxy struct {
	URL  string // http://127.0.0.1:PORT
	Dir  string // configuration, logs, cache
	cmd  *exec.Cmd
	done <-chan struct{} // closed once squid has exited
}

// Binary is squid's path, or "" when squid is not installed.
func Binary() string {
	for _, p := range []string{"/usr/sbin/squid", "/usr/local/sbin/squid"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("squid"); err == nil {
		return p
	}
	return ""
}

// Options configure Start.
type Options struct {
	// Extra lines appended to the configuration (e.g. refresh_pattern,
	// range_offset_limit).
	Extra []string
	// CacheMB is the memory cache (cache_mem), default 256.
	CacheMB int
}

// Start runs squid on a free port of 127.0.0.1 until Stop. As root, squid
// runs as the user proxy (Debian's), which owns its directory.
func Start(opts Options) (*Proxy, error) {
	bin := Binary()
	if bin == "" {
		return nil, errors.New("squid is not installed (Debian: apt-get install squid)")
	}
	dir, err := os.MkdirTemp("", "rsfs-squid")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := daemon.FreePort()
	if err != nil {
		return nil, err
	}
	if opts.CacheMB <= 0 {
		opts.CacheMB = 256
	}
	conf := []string{
		fmt.Sprintf("http_port 127.0.0.1:%d", port),
		"http_access allow localhost",
		"http_access deny all",
		fmt.Sprintf("cache_mem %d MB", opts.CacheMB),
		"maximum_object_size_in_memory 4 MB",
		"pid_filename " + filepath.Join(dir, "squid.pid"),
		"cache_log " + filepath.Join(dir, "cache.log"),
		"access_log stdio:" + filepath.Join(dir, "access.log") + " squid",
		"cache_store_log none",
		"coredump_dir " + dir,
		"shutdown_lifetime 0 seconds",
		"pinger_enable off",
		"dns_v4_first on",
		// The stock rule: a response without explicit freshness is fresh
		// for 20% of its age since Last-Modified (at most 3 days).
		"refresh_pattern . 0 20% 4320",
	}
	conf = append(conf, opts.Extra...)
	if os.Geteuid() == 0 {
		conf = append(conf, "cache_effective_user proxy")
		if u, err := user.Lookup("proxy"); err == nil {
			uid, _ := strconv.Atoi(u.Uid)
			gid, _ := strconv.Atoi(u.Gid)
			_ = os.Chown(dir, uid, gid)
		}
	}
	confPath := filepath.Join(dir, "squid.conf")
	if err := os.WriteFile(confPath, []byte(strings.Join(conf, "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-N", "-f", confPath)
	done, err := daemon.Start(cmd, dir, port, 20*time.Second, "cache.log")
	if err != nil {
		return nil, fmt.Errorf("squid %w", err)
	}
	return &Proxy{URL: fmt.Sprintf("http://127.0.0.1:%d", port), Dir: dir, cmd: cmd, done: done}, nil
}

// Stop ends squid (the process Start started) and removes its directory.
func (p *Proxy) Stop() {
	if p == nil || p.cmd.Process == nil {
		return
	}
	daemon.Stop(p.cmd.Process, p.done, os.Interrupt, 6*time.Second)
	_ = os.RemoveAll(p.Dir)
}

// Log counts the access log's result codes (TCP_MISS, TCP_MEM_HIT,
// TCP_REFRESH_MODIFIED, ...), after squid wrote it (it buffers: read it
// once the requests are answered; Stop flushes too).
func (p *Proxy) Log() (map[string]int, []string, error) {
	f, err := os.Open(filepath.Join(p.Dir, "access.log"))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	counts := map[string]int{}
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 {
			continue
		}
		code, _, _ := strings.Cut(fields[3], "/")
		counts[code]++
		lines = append(lines, sc.Text())
	}
	return counts, lines, sc.Err()
}

// LoopbackName returns a host name, other than localhost, that resolves to
// a loopback address: a Source reached by it goes through HTTP_PROXY,
// where Go's client sends requests to "localhost" and to loopback IPs
// directly. It tries the machine's host name (Debian's /etc/hosts maps it
// to 127.0.1.1 or 127.0.0.1), then the other names /etc/hosts gives a
// loopback address.
func LoopbackName() (string, error) {
	var names []string
	if h, err := os.Hostname(); err == nil {
		names = append(names, h)
	}
	if data, err := os.ReadFile("/etc/hosts"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			line, _, _ = strings.Cut(line, "#")
			f := strings.Fields(line)
			if len(f) > 1 && strings.HasPrefix(f[0], "127.") {
				names = append(names, f[1:]...)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, n := range names {
		if n == "localhost" || strings.HasPrefix(n, "localhost.") || strings.HasSuffix(n, ".localhost") {
			continue
		}
		addrs, err := net.DefaultResolver.LookupIPAddr(ctx, n)
		if err != nil || len(addrs) == 0 {
			continue
		}
		ok := true
		for _, a := range addrs {
			ok = ok && a.IP.To4() != nil && a.IP.IsLoopback()
		}
		if ok {
			return n, nil
		}
	}
	return "", errors.New("no host name other than localhost resolves to 127.0.0.0/8 only (add one to /etc/hosts, e.g. '127.0.1.1 rsfs-source')")
}
