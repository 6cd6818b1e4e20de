package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// A READ across the ring's end gets both parts; one the ring has dropped
// gets EIO, not other bytes.
func TestStreamFSReadAcrossTheRingsEnd(t *testing.T) {
	src, srv, body := streamSource(t)
	sum := sha256.Sum256(body)
	s, err := newStreamFS(src, bigRelPath, srv.URL+"/"+bigRelPath, hex.EncodeToString(sum[:]))
	if err != nil {
		t.Fatal(err)
	}
	// The GET waits for READs that will not come: stopped, it ends, so the
	// server's Close (a cleanup registered earlier, run later) does not wait.
	t.Cleanup(func() { s.file.stop(errors.New("test over")) })
	read := func(off, n int) ([]byte, fuse.Status) {
		res, st := s.Read(nil, &fuse.ReadIn{InHeader: fuse.InHeader{NodeId: s.id}, Offset: uint64(off)}, make([]byte, n))
		if !st.Ok() {
			return nil, st
		}
		b, _ := res.Bytes(nil)
		return b, st
	}
	off := 0
	for ; off < streamRing-streamChunk; off += streamChunk {
		if _, st := read(off, streamChunk); !st.Ok() {
			t.Fatalf("read at %d: %v", off, st)
		}
	}
	off += streamChunk - 3
	if got, st := read(off, 10); !bytes.Equal(got, body[off:off+10]) {
		t.Fatalf("read across the ring's end at %d: %v %x, want %x", off, st, got, body[off:off+10])
	}
	if _, st := read(0, 10); st != fuse.EIO {
		t.Fatalf("read of dropped bytes: %v, want EIO", st)
	}
}

// streamSource serves a directory whose large file is a little over two
// rings long.
func streamSource(t *testing.T) (string, *httptest.Server, []byte) {
	src := t.TempDir()
	body := make([]byte, 2*streamRing+streamChunk/2+7)
	rand.New(rand.NewSource(1)).Read(body)
	if err := os.MkdirAll(filepath.Join(src, "big"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, bigRelPath), body, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(src)))
	t.Cleanup(srv.Close)
	return src, srv, body
}

// The streaming floor hands a sequential reader the served bytes across
// the ring's wrap, and EIO when the hash differs from the one given.
func TestStreamFSReadsTheServedBytesAndRefusesAnotherHash(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs /dev/fuse and root (a direct mount)")
	}
	src, srv, body := streamSource(t)
	sum := sha256.Sum256(body)
	other := sum
	other[0]++

	read := func(sum []byte) ([]byte, error) {
		s, err := newStreamFS(src, bigRelPath, srv.URL+"/"+bigRelPath, hex.EncodeToString(sum))
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		server, err := mountRaw(s, dir)
		if err != nil {
			t.Fatal(err)
		}
		go server.Serve()
		t.Cleanup(func() { _ = server.Unmount() })
		if err := server.WaitMount(); err != nil {
			t.Fatal(err)
		}
		return os.ReadFile(filepath.Join(dir, bigRelPath))
	}
	got, err := read(sum[:])
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("read %d bytes (want %d), equal %v, err %v", len(got), len(body), bytes.Equal(got, body), err)
	}
	if _, err := read(other[:]); !errors.Is(err, syscall.EIO) {
		t.Fatalf("read with another hash: err %v, want EIO", err)
	}
}
