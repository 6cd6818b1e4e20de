package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGetEachFetchesEveryFileOncePipelined(t *testing.T) {
	var gets, conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		switch {
		case strings.HasSuffix(r.URL.Path, "missing.txt"):
			http.NotFound(w, r)
		case strings.HasSuffix(r.URL.Path, "chunked.txt"):
			w.Write([]byte("no length"))
			w.(http.Flusher).Flush()
		default:
			body := strings.Repeat("x", len(r.URL.Path)*10)
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			w.Write([]byte(body))
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	list := func(names ...string) string {
		p := filepath.Join(t.TempDir(), "list")
		require.NoError(t, os.WriteFile(p, []byte(strings.Join(names, "\n")+"\n"), 0o644))
		return p
	}
	var names []string
	for i := range 500 {
		names = append(names, fmt.Sprintf("data/d%02d/f%04d.txt", i/50, i))
	}
	require.NoError(t, runGetEach(srv.URL+"/base/", list(names...)))
	assert.EqualValues(t, 500, gets.Load(), "one GET per file")
	assert.EqualValues(t, getEachConns, conns.Load(), "on the pipelined connections only")

	err := runGetEach(srv.URL+"/", list("a.txt", "missing.txt", "b.txt"))
	assert.ErrorContains(t, err, "missing.txt: answered \"HTTP/1.1 404 Not Found\"")
	err = runGetEach(srv.URL+"/", list("chunked.txt"))
	assert.ErrorContains(t, err, "answer without Content-Length")
	assert.Error(t, runGetEach("https://example.org/", list("a.txt")), "only plain http")
}
