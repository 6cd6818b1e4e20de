// Package revcache starts a reverse-proxy cache in front of a test Source
// on 127.0.0.1, for tests and benchmarks: nginx with proxy_cache and slice,
// or Varnish, each with the configuration of docs/caches.md, in a
// temporary directory. The Source publishes its URIs under the cache's URL
// (sourcetest.Config.Base), so every request of a mount, documents and
// files, goes through the cache, as a Source's host name resolved to the
// cache does in the field.
package revcache

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"rsfs/tests/daemon"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Kind names a cache.
type Kind string

// The caches Start runs.
const (
	Nginx   Kind = "nginx"
	Varnish Kind = "varnish"
)

// Cache is a running reverse-proxy cache.
type Cache struct {
	Kind Kind
	URL  string // http://127.0.0.1:PORT/
	Dir  string // configuration, logs, cache
	cmd  *exec.Cmd
	done <-chan struct{} // closed once it has exited
}

// Binary is the cache's executable, or "" when it is not installed.
func Binary(k Kind) string {
	name := map[Kind]string{Nginx: "nginx", Varnish: "varnishd"}[k]
	for _, d := range []string{"/usr/sbin/", "/usr/local/sbin/"} {
		if _, err := os.Stat(d + name); err == nil {
			return d + name
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return ""
}

// FreePort returns a free port of 127.0.0.1, for the cache's URL before
// the Source it forwards to is started.
func FreePort() (int, error) { return daemon.FreePort() }

// NginxConf is the configuration of docs/caches.md, on 127.0.0.1:port,
// forwarding to origin (host:port), with its files in dir.
func NginxConf(dir string, port int, origin string) string {
	user := ""
	if os.Geteuid() == 0 {
		user = "user root root;\n"
	}
	return fmt.Sprintf(`%sdaemon off;
worker_processes 1;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log notice;
events { worker_connections 1024; }
http {
    log_format rsfs '$request_method $uri "$http_range" "$http_cache_control" $status $upstream_cache_status $upstream_status';
    access_log %[2]s/access.log rsfs;
    client_body_temp_path %[2]s/tmp/body;
    proxy_temp_path %[2]s/tmp/proxy;
    fastcgi_temp_path %[2]s/tmp/fastcgi;
    uwsgi_temp_path %[2]s/tmp/uwsgi;
    scgi_temp_path %[2]s/tmp/scgi;
    proxy_cache_path %[2]s/cache keys_zone=rsfs:16m max_size=2g inactive=30d use_temp_path=off;
    server {
        listen 127.0.0.1:%[3]d;
        location / {
            slice 1m;
            proxy_cache rsfs;
            proxy_cache_key $scheme$host$uri$is_args$args$slice_range;
            proxy_set_header Range $slice_range;
            proxy_http_version 1.1;
            proxy_cache_valid 200 206 1d;
            proxy_cache_bypass $http_cache_control $http_pragma;
            proxy_pass http://%[4]s;
        }
    }
}
`, user, dir, port, origin)
}

// VarnishVCL is the VCL of docs/caches.md, with origin (host:port) as its
// backend.
func VarnishVCL(origin string) string {
	host, port, _ := net.SplitHostPort(origin)
	return fmt.Sprintf(`vcl 4.1;

backend default {
    .host = "%s";
    .port = "%s";
}

sub vcl_recv {
    if (req.http.Cache-Control ~ "no-cache" || req.http.Pragma ~ "no-cache") {
        set req.hash_always_miss = true;
    } elsif (req.http.Cache-Control ~ "max-age=0") {
        return (pass);
    }
}

sub vcl_backend_response {
    if (beresp.status == 200 && !beresp.http.Cache-Control && !beresp.http.Expires) {
        set beresp.ttl = 1d;
    }
}
`, host, port)
}

// Start runs the cache on 127.0.0.1:port (from FreePort), forwarding to
// origin (host:port), until Stop.
func Start(k Kind, port int, origin string) (*Cache, error) {
	bin := Binary(k)
	if bin == "" {
		return nil, fmt.Errorf("%s is not installed (Debian: apt-get install %s)", k, k)
	}
	dir, err := os.MkdirTemp("", "rsfs-"+string(k))
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	c := &Cache{Kind: k, URL: fmt.Sprintf("http://127.0.0.1:%d/", port), Dir: dir}
	var cmd *exec.Cmd
	switch k {
	case Nginx:
		if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
			return nil, err
		}
		conf := filepath.Join(dir, "nginx.conf")
		if err := os.WriteFile(conf, []byte(NginxConf(dir, port, origin)), 0o644); err != nil {
			return nil, err
		}
		cmd = exec.Command(bin, "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", conf)
	case Varnish:
		vcl := filepath.Join(dir, "rsfs.vcl")
		if err := os.WriteFile(vcl, []byte(VarnishVCL(origin)), 0o644); err != nil {
			return nil, err
		}
		cmd = exec.Command(bin, "-F", "-n", filepath.Join(dir, "work"), "-a", fmt.Sprintf("127.0.0.1:%d", port),
			"-f", vcl, "-s", "malloc,256m")
	default:
		return nil, fmt.Errorf("unknown cache %q", k)
	}
	done, err := daemon.Start(cmd, dir, port, 30*time.Second, "error.log")
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("%s %w", k, err)
	}
	c.cmd, c.done = cmd, done
	return c, nil
}

// Stop ends the cache (the process Start started: nginx's master, which
// ends its worker; varnishd's manager, which ends its child) and removes
// its directory.
func (c *Cache) Stop() {
	if c == nil || c.cmd == nil || c.cmd.Process == nil {
		return
	}
	daemon.Stop(c.cmd.Process, c.done, syscall.SIGTERM, 10*time.Second)
	_ = os.RemoveAll(c.Dir)
}

// Stats counts what the cache answered. nginx: the access log's
// $upstream_cache_status per request (HIT, MISS, BYPASS, EXPIRED, "-" for
// none). Varnish: varnishstat's counters client_req, cache_hit,
// cache_miss, cache_hitpass, backend_req, fetch_failed and n_object.
func (c *Cache) Stats() (map[string]int, error) {
	counts := map[string]int{}
	switch c.Kind {
	case Nginx:
		f, err := os.Open(filepath.Join(c.Dir, "access.log"))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) >= 2 {
				counts[fields[len(fields)-2]]++
			}
		}
		return counts, sc.Err()
	case Varnish:
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "varnishstat", "-n", filepath.Join(c.Dir, "work"), "-1",
			"-f", "MAIN.client_req", "-f", "MAIN.cache_hit", "-f", "MAIN.cache_miss", "-f", "MAIN.cache_hitpass",
			"-f", "MAIN.backend_req", "-f", "MAIN.fetch_failed", "-f", "MAIN.n_object").Output()
		if err != nil {
			return nil, fmt.Errorf("varnishstat: %w", err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			name, ok := strings.CutPrefix(f[0], "MAIN.")
			if !ok {
				continue
			}
			if n, err := strconv.Atoi(f[1]); err == nil {
				counts[name] = n
			}
		}
		return counts, nil
	}
	return nil, errors.New("unknown cache")
}

// Hits is the number of requests the cache answered from its store.
func (c *Cache) Hits() (int, error) {
	s, err := c.Stats()
	if err != nil {
		return 0, err
	}
	if c.Kind == Nginx {
		return s["HIT"], nil
	}
	return s["cache_hit"], nil
}
