package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tlsFiles are the PEM files a test CA issued.
type tlsFiles struct {
	ca, serverCert, serverKey, clientCert, clientKey string
}

// makeTLSFiles makes a CA, a server certificate for 127.0.0.1 and a client
// certificate, all issued by the CA, as PEM files in dir.
func makeTLSFiles(t *testing.T, dir string) tlsFiles {
	t.Helper()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		return k
	}
	writePEM := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600))
		return p
	}
	writeKey := func(name string, k *ecdsa.PrivateKey) string {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		require.NoError(t, err)
		return writePEM(name, "PRIVATE KEY", der)
	}
	now := time.Now()
	caKey := newKey()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "rsfs test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	issue := func(serial int64, cn string, usage x509.ExtKeyUsage, ips []net.IP) ([]byte, *ecdsa.PrivateKey) {
		k := newKey()
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		require.NoError(t, err)
		return der, k
	}
	srvDER, srvKey := issue(2, "127.0.0.1", x509.ExtKeyUsageServerAuth, []net.IP{net.IPv4(127, 0, 0, 1)})
	cliDER, cliKey := issue(3, "rsfs test client", x509.ExtKeyUsageClientAuth, nil)
	return tlsFiles{
		ca:         writePEM("ca.pem", "CERTIFICATE", caDER),
		serverCert: writePEM("server.pem", "CERTIFICATE", srvDER),
		serverKey:  writeKey("server.key", srvKey),
		clientCert: writePEM("client.pem", "CERTIFICATE", cliDER),
		clientKey:  writeKey("client.key", cliKey),
	}
}

// nginxSource is a static Source served by nginx over TLS.
type nginxSource struct {
	url       string // https://127.0.0.1:PORT/
	accessLog string
	files     tlsFiles
}

// startNginx serves a static Source of n small files over TLS on
// 127.0.0.1, offering HTTP/2 when h2, and asking for a client certificate
// issued by the test CA when mtls. It stops when the test ends. The test
// is skipped when nginx is not installed.
func startNginx(t *testing.T, n int, h2, mtls bool) *nginxSource {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx"} {
			if _, err := os.Stat(p); err == nil {
				bin = p
			}
		}
	}
	if bin == "" {
		t.Skip("needs nginx (Debian: apt-get install nginx; .ci/run installs it)")
	}
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	src := &nginxSource{url: "https://" + addr + "/", accessLog: filepath.Join(dir, "access.log"), files: makeTLSFiles(t, dir)}

	root := filepath.Join(dir, "www")
	files := make([]staticFile, n)
	for i := range files {
		p := fmt.Sprintf("f/%03d/%05d.txt", i/100, i)
		files[i] = staticFile{loc: src.url + p, path: p, body: []byte(fmt.Sprintf("file %d %s\n", i, strings.Repeat("x", i%200)))}
	}
	writeStaticSource(t, root, src.url, files)

	listen := "listen " + addr + " ssl;"
	if h2 {
		listen = "listen " + addr + " ssl http2;" // nginx before 1.25.1; after, "http2 on;"
	}
	verify := "off"
	if mtls {
		verify = "on"
	}
	conf := nginxPreamble(dir, `$request_method $uri $status $server_protocol conn=$connection`) + fmt.Sprintf(`	server {
		%[1]s
		ssl_certificate %[2]s;
		ssl_certificate_key %[3]s;
		ssl_client_certificate %[4]s;
		ssl_verify_client %[5]s;
		root %[6]s;
	}
}
`, listen, src.files.serverCert, src.files.serverKey, src.files.ca, verify, root)
	runNginx(t, bin, dir, conf, addr)
	return src
}

// requests counts the access log's lines, the distinct connections among
// them, and the protocols they used.
func (s *nginxSource) requests(t *testing.T) (n int, conns int, protos map[string]int) {
	t.Helper()
	data, err := os.ReadFile(s.accessLog)
	require.NoError(t, err)
	seen := map[string]bool{}
	protos = map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		n++
		protos[f[3]]++
		seen[f[4]] = true
	}
	return n, len(seen), protos
}

// TestTLSPrivateCA: a Source behind a private CA is refused without
// --ca-cert and read with it, the system's roots kept.
func TestTLSPrivateCA(t *testing.T) {
	src := startNginx(t, 20, true, false)
	_, stderr, err := run(t, time.Minute, rsfsBin, "inspect", src.url, "--retries", "0")
	require.Error(t, err)
	assert.Contains(t, stderr, "certificate")

	out, stderr, err := run(t, time.Minute, rsfsBin, "inspect", src.url, "--ca-cert", src.files.ca)
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "20")

	m := mount(t, src.url, "--ca-cert", src.files.ca)
	b, err := os.ReadFile(m.path("f/000/00007.txt"))
	require.NoError(t, err)
	assert.Equal(t, "file 7 xxxxxxx\n", string(b))
	_, _, protos := src.requests(t)
	assert.Equal(t, 0, protos["HTTP/1.1"], "HTTP/2 when the server offers it: %v", protos)
}

// TestTLSClientCertificate: a Source that asks for a client certificate
// is refused without one and read with --client-cert and --client-key.
func TestTLSClientCertificate(t *testing.T) {
	src := startNginx(t, 20, false, true)
	_, stderr, err := run(t, time.Minute, rsfsBin, "inspect", src.url, "--ca-cert", src.files.ca, "--retries", "0")
	require.Error(t, err, "nginx answers 400 without a client certificate")
	assert.Contains(t, stderr, "no ResourceSync Source found", "discovery reports the 400s so")

	_, stderr, err = run(t, time.Minute, rsfsBin, "inspect", src.url, "--ca-cert", src.files.ca, "--client-cert", src.files.clientCert)
	require.Error(t, err)
	assert.Contains(t, stderr, "--client-cert needs --client-key")

	m := mount(t, src.url, "--ca-cert", src.files.ca, "--client-cert", src.files.clientCert, "--client-key", src.files.clientKey)
	b, err := os.ReadFile(m.path("f/000/00019.txt"))
	require.NoError(t, err)
	assert.Equal(t, "file 19 "+strings.Repeat("x", 19)+"\n", string(b))
}

// TestTLSSmallFilesHTTP2 measures reading 1,000 small files through a
// mount, over HTTP/1.1 and over HTTP/2: time, requests and connections.
func TestTLSSmallFilesHTTP2(t *testing.T) {
	if os.Getenv("RSFS_MEASURE") == "" {
		t.Skip("set RSFS_MEASURE=1 to measure")
	}
	for _, h2 := range []bool{false, true} {
		src := startNginx(t, 1000, h2, false)
		m := mount(t, src.url, "--ca-cert", src.files.ca, "--cache-dir", "none")
		n0, _, _ := src.requests(t)
		start := time.Now()
		out, stderr, err := run(t, 5*time.Minute, "sh", "-c", "find "+m.dir+"/f -type f -print0 | xargs -0 cat | wc -c")
		require.NoError(t, err, stderr)
		took := time.Since(start)
		n, conns, protos := src.requests(t)
		t.Logf("h2=%v: 1000 files (%s bytes) read in %v; requests %d (%d while reading), connections %d, protocols %v",
			h2, strings.TrimSpace(out), took.Round(time.Millisecond), n, n-n0, conns, protos)
		m.unmount(t)
	}
}

// runNginx writes conf as dir/nginx.conf, runs Debian's nginx (bin) on it
// in the foreground until the test ends, and returns once it listens on
// addr; an nginx that exits first fails the test with its error log.
func runNginx(t *testing.T, bin, dir, conf, addr string) {
	t.Helper()
	confPath := filepath.Join(dir, "nginx.conf")
	require.NoError(t, os.WriteFile(confPath, []byte(conf), 0o644))
	cmd := exec.Command(bin, "-p", dir, "-c", confPath, "-e", filepath.Join(dir, "error.log"))
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Log("nginx did not exit")
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-done:
			errLog, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx exited: %s %s", stderr.String(), errLog)
		default:
		}
		require.True(t, time.Now().Before(deadline), "nginx did not listen on %s", addr)
		time.Sleep(50 * time.Millisecond)
	}
}

// nginxPreamble is what every nginx.conf of these tests begins with, up
// to the server blocks inside http: in the foreground, its pid, logs and
// temporary files under dir, as root when the tests are (so the workers
// read the test's files), requests logged in logFormat.
func nginxPreamble(dir, logFormat string) string {
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;"
	}
	return fmt.Sprintf(`%s
daemon off;
master_process off;
worker_processes 1;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log warn;
events { worker_connections 512; }
http {
	types { text/xml xml; text/plain txt; }
	default_type text/xml;
	log_format t '%[3]s';
	access_log %[2]s/access.log t;
	client_body_temp_path %[2]s/tmp-body;
	proxy_temp_path %[2]s/tmp-proxy;
	fastcgi_temp_path %[2]s/tmp-fastcgi;
	uwsgi_temp_path %[2]s/tmp-uwsgi;
	scgi_temp_path %[2]s/tmp-scgi;
	keepalive_requests 100000;
`, user, dir, logFormat)
}
