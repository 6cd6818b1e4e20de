package main

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
)

// getEachArg is the bench's first argument when it runs as the floor
// client: `bench get-each URL LIST` GETs every path of LIST (one a line)
// from URL's host and md5s each body, and nothing else.
const getEachArg = "get-each"

// getEachConns and getEachDepth: the floor client pipelines its GETs as
// rsfs does on a fast host (fetch/pipeline.go), on as many connections, so
// it asks the server for the same work: one GET per file.
const (
	getEachConns = 2
	getEachDepth = 64
)

// refGetEach is the HTTP side of the small-file floor that a FUSE file
// system could reach: the least a client can do to have every small file's
// bytes checked in memory (pipelined GETs, the least parsing, md5), from
// the server as the mounts meet it. No FUSE, no cache, no reader.
const refGetEach = "pipelined GET and md5 of each small file, no FUSE"

// runGetEach is the get-each command.
func runGetEach(base, list string) error {
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("get-each: want a plain http:// URL, got %q", base)
	}
	data, err := os.ReadFile(list)
	if err != nil {
		return fmt.Errorf("get-each: %w", err)
	}
	paths := strings.Fields(string(data))
	prefix := strings.TrimSuffix(u.Path, "/") + "/"
	errs := make([]error, getEachConns)
	var wg sync.WaitGroup
	for c := range getEachConns {
		var mine []string
		for i := c; i < len(paths); i += getEachConns {
			mine = append(mine, prefix+strings.TrimPrefix(paths[i], "/"))
		}
		wg.Go(func() { errs[c] = getPipelined(u.Host, mine, getEachDepth) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// getPipelined GETs paths over one connection, at most depth written ahead
// of the answers read, and md5s each body. Every answer must be a 200 with
// a Content-Length (what nginx sends for a static file).
func getPipelined(host string, paths []string, depth int) error {
	c, err := net.Dial("tcp", host)
	if err != nil {
		return fmt.Errorf("get-each: %w", err)
	}
	defer c.Close()
	ahead := make(chan struct{}, depth)
	go func() {
		w := bufio.NewWriterSize(c, 64<<10)
		for _, p := range paths {
			select {
			case ahead <- struct{}{}:
			default: // as many as were waiting go in one write
				if w.Flush() != nil {
					return
				}
				ahead <- struct{}{}
			}
			_, _ = w.WriteString("GET " + p + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n")
		}
		_ = w.Flush()
	}()
	r := bufio.NewReaderSize(c, 64<<10)
	body := make([]byte, 1<<20)
	for _, p := range paths {
		n, err := readHead(r)
		if err != nil {
			return fmt.Errorf("get-each %s: %w", p, err)
		}
		if n > len(body) {
			body = make([]byte, n)
		}
		if _, err := io.ReadFull(r, body[:n]); err != nil {
			return fmt.Errorf("get-each %s: body: %w", p, err)
		}
		md5.Sum(body[:n])
		<-ahead
	}
	return nil
}

// readHead reads an answer's status line and headers and returns its
// Content-Length.
func readHead(r *bufio.Reader) (int, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	if !bytes.HasPrefix(line, []byte("HTTP/1.1 200 ")) {
		return 0, fmt.Errorf("answered %q", bytes.TrimSpace(line))
	}
	n := -1
	for {
		line, err = r.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			break
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(k, []byte("Content-Length")) {
			if n, err = strconv.Atoi(string(bytes.TrimSpace(v))); err != nil {
				return 0, fmt.Errorf("Content-Length %q", bytes.TrimSpace(v))
			}
		}
	}
	if n < 0 {
		return 0, errors.New("answer without Content-Length")
	}
	return n, nil
}
