package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"text/template"
	"time"
)

// nginxServer is the peer Source: Debian's nginx on 127.0.0.1, one port
// per hash algorithm, every request logged with its method, URI, status,
// bytes and Range header, so the bench counts what each client asked.
type nginxServer struct {
	dir       string
	accessLog string
	errorLog  string
	ports     map[string]int // by algorithm
	cmd       *exec.Cmd
	done      chan error
}

var nginxConf = template.Must(template.New("nginx.conf").Parse(`
user root;
worker_processes 2;
daemon off;
master_process on;
pid {{.Dir}}/nginx.pid;
error_log {{.ErrorLog}} info;
events { worker_connections 4096; }
http {
  log_format bench '$request_method $status $body_bytes_sent "$http_range" $server_port "$request_uri"';
  access_log {{.AccessLog}} bench;
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
  server {
    listen 127.0.0.1:{{.Port}};
    root {{$.WWW}};
    autoindex on;
    location = /.well-known/resourcesync { root {{.Docs}}; default_type application/xml; }
    location ~ ^/(capabilitylist|resourcelist(-[0-9]+)?|resourcedump)\.xml$ { root {{.Docs}}; }
  }
{{end}}
{{range .Fronts}}
  upstream front{{.Port}} { server 127.0.0.1:{{.Upstream}}; keepalive 256; }
  server {
    listen 127.0.0.1:{{.Port}} ssl http2;
    ssl_certificate {{$.Cert}};
    ssl_certificate_key {{$.Key}};
    access_log off;
    http2_max_concurrent_streams 128;
    location / {
      proxy_pass http://front{{.Port}};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
{{end}}
}
`))

// tlsFronts are HTTPS servers that speak HTTP/2 (and HTTP/1.1) in front of
// another port, each request passed on over HTTP/1.1 keep-alive
// connections: in the latency bench, to the delaying proxy, so the delay
// is paid per request whatever the protocol on the client's side. They
// log nothing, so the access log counts each request once, at the origin.
type tlsFronts struct {
	Cert, Key string
	Fronts    []tlsFront
}

type tlsFront struct{ Port, Upstream int }

type nginxVars struct {
	Dir, ErrorLog, AccessLog, WWW string
	Servers                       []struct {
		Port int
		Docs string
	}
	tlsFronts
}

// startNginx writes nginx.conf under dir and runs nginx in the foreground
// (daemon off) as a child of the bench, serving t on one port per
// algorithm (or Source name), and the HTTPS fronts if any; it returns once
// every plain port answers.
func startNginx(dir string, t *peerTree, ports map[string]int, fronts tlsFronts) (*nginxServer, error) {
	s := &nginxServer{dir: dir, accessLog: filepath.Join(dir, "access.log"),
		errorLog: filepath.Join(dir, "error.log"), ports: ports, done: make(chan error, 1)}
	v := nginxVars{Dir: dir, ErrorLog: s.errorLog, AccessLog: s.accessLog, WWW: t.www, tlsFronts: fronts}
	for alg, port := range ports {
		v.Servers = append(v.Servers, struct {
			Port int
			Docs string
		}{port, t.docs[alg]})
	}
	var conf bytes.Buffer
	if err := nginxConf.Execute(&conf, v); err != nil {
		return nil, fmt.Errorf("nginx.conf: %w", err)
	}
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, conf.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("nginx.conf: %w", err)
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

func (s *nginxServer) url(alg string) string {
	return fmt.Sprintf("http://127.0.0.1:%d/", s.ports[alg])
}

func (s *nginxServer) waitServing() error {
	deadline := time.Now().Add(20 * time.Second)
	for alg := range s.ports {
		for {
			resp, err := http.Get(s.url(alg) + ".well-known/resourcesync")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
				err = fmt.Errorf("status %s", resp.Status)
			}
			select {
			case werr := <-s.done:
				return fmt.Errorf("nginx exited: %v (see %s)", werr, s.errorLog)
			default:
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("nginx on %s: %w (see %s)", s.url(alg), err, s.errorLog)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// stop asks the master we started to quit (SIGQUIT: graceful), then kills
// it if it has not gone in ten seconds.
func (s *nginxServer) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// logMark is a position in the access log.
type logMark int64

func (s *nginxServer) mark() logMark {
	fi, err := os.Stat(s.accessLog)
	if err != nil {
		return 0
	}
	return logMark(fi.Size())
}

// requests summarises the access log's lines since m.
type requests struct {
	total, heads, ranged int
	content              int // GETs of a resource's bytes: a file under data/ or big/, or a range of a dump package (under dumps*/)
	bytes                int64
}

func (s *nginxServer) since(m logMark) requests {
	data, err := os.ReadFile(s.accessLog)
	if err != nil || int64(m) > int64(len(data)) {
		return requests{}
	}
	var r requests
	for _, line := range strings.Split(string(data[m:]), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		r.total++
		if f[0] == "HEAD" {
			r.heads++
		}
		if f[3] != `"-"` {
			r.ranged++
		}
		if len(f) > 5 && f[0] == "GET" {
			uri := strings.Trim(f[5], `"`)
			if strings.HasPrefix(uri, "/data/") || strings.HasPrefix(uri, "/big/") ||
				(strings.HasPrefix(uri, "/dumps") && f[3] != `"-"`) {
				r.content++
			}
		}
		var n int64
		fmt.Sscan(f[2], &n)
		r.bytes += n
	}
	return r
}

// freePorts asks the kernel for n unused ports on 127.0.0.1.
func freePorts(n int) ([]int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
