package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// The streaming floor (issue 42): the least a FUSE file system must do to
// hand out a large file it fetches and verifies as it reads. streamFS is
// memFS with one file, the large one, that is not loaded: its first READ
// starts one GET of the whole file into a ring of streamRing bytes, a
// goroutine beside it hashes what has arrived with Go's sha-256, and a
// READ is answered as soon as its bytes are in; the READ that reaches the
// end waits for the hash and fails with EIO if it differs. No blocks, no
// cache, no range requests, no retries: the wire, the hash and FUSE, in
// one process. The ring reuses its memory (a buffer of the whole file
// took 0.60 s where the ring takes 0.50, its first touch of 512 MiB
// costing 130,000 page faults), so a reader that goes back further than
// a readahead window behind the furthest READ gets EIO: a floor for one
// sequential read, not a file system.

// streamFSArg is the bench's first argument when it runs as a streamFS mount:
//
//	bench streamfs-serve SRC DIR REL URL SHA256
const streamFSArg = "streamfs-serve"

// streamChunk is how many bytes one read from the body asks for, and
// streamRing the ring's size, a multiple of it (measured: 256 KiB chunks
// or a 64 MiB ring were no faster).
const (
	streamChunk = 1 << 20
	streamRing  = 16 << 20
)

const streamFSName = "floor: streaming FUSE fs (GET + sha-256)"

type streamFS struct {
	*memFS
	id   uint64 // the streamed file's node
	file *streamFile
}

// streamFile is the streamed file's bytes as they arrive.
type streamFile struct {
	url  string
	size int
	want []byte
	ring []byte // byte i of the file is ring[i%streamRing] while it lasts
	once sync.Once

	mu       sync.Mutex
	cond     *sync.Cond
	have     int  // bytes arrived
	hashedTo int  // bytes hashed
	served   int  // the furthest end a READ was answered to
	hashed   bool // the hash is done (ok tells its verdict)
	ok       bool
	err      error
}

// serveStreamFS mounts src's tree on dir, with rel streamed from url,
// and serves it until it is unmounted.
func serveStreamFS(src, dir, rel, url, sum string) error {
	s, err := newStreamFS(src, rel, url, sum)
	if err != nil {
		return err
	}
	return serveRaw(s, dir)
}

// newStreamFS loads src's tree but rel, which it streams from url.
func newStreamFS(src, rel, url, sum string) (*streamFS, error) {
	want, err := hex.DecodeString(sum)
	if err != nil {
		return nil, fmt.Errorf("sha-256 %q: %w", sum, err)
	}
	big := filepath.Join(src, filepath.FromSlash(rel))
	m, err := loadMemFS(src, big)
	if err != nil {
		return nil, err
	}
	if m.skipped == 0 {
		return nil, fmt.Errorf("%s: not in the tree", big)
	}
	f := &streamFile{url: url, want: want, size: int(m.nodes[m.skipped].attr.Size), ring: make([]byte, streamRing)}
	s := &streamFS{memFS: m, id: m.skipped, file: f}
	s.file.cond = sync.NewCond(&s.file.mu)
	return s, nil
}

func (s *streamFS) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	if in.NodeId != s.id {
		return s.memFS.Read(cancel, in, buf)
	}
	f := s.file
	f.once.Do(func() { go f.fetch() })
	off := min(int(in.Offset), f.size)
	end := min(off+len(buf), f.size)
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.err == nil && (f.have < end || end == f.size && !f.hashed) {
		f.cond.Wait()
	}
	if f.err != nil || end == f.size && !f.ok {
		return nil, fuse.EIO
	}
	if off < f.have+streamChunk-streamRing { // overwritten, or being
		return nil, fuse.EIO
	}
	f.served = max(f.served, end)
	f.cond.Broadcast()
	at := off % streamRing
	n := copy(buf, f.ring[at:min(streamRing, at+end-off)])
	copy(buf[n:], f.ring[:end-off-n])
	return fuse.ReadResultData(buf[:end-off]), fuse.OK
}

// room waits until the ring can take the chunk after have: its bytes were
// hashed, and READs went a readahead window past them. It reports false
// once the stream failed or was stopped.
func (f *streamFile) room(have int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for have+streamChunk-streamRing > min(f.hashedTo, f.served-streamSlack) && f.err == nil {
		f.cond.Wait()
	}
	return f.err == nil
}

// streamSlack is how far behind the furthest READ the kernel may still ask.
const streamSlack = 4 << 20

// fetch reads the body into the ring, a chunk at a time, and hands each chunk
// to the hash beside it.
func (f *streamFile) fetch() {
	chunks := make(chan int, streamRing/streamChunk)
	go f.hash(chunks)
	defer close(chunks)
	resp, err := http.Get(f.url)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", f.url, resp.Status)
	}
	if err != nil {
		f.fail(err)
		return
	}
	defer resp.Body.Close()
	for have := 0; have < f.size; {
		if !f.room(have) {
			return
		}
		at := have % streamRing
		n, err := io.ReadFull(resp.Body, f.ring[at:at+min(streamChunk, f.size-have)])
		if err != nil {
			f.fail(err)
			return
		}
		have += n
		chunks <- have
		f.mu.Lock()
		f.have = have
		f.mu.Unlock()
		f.cond.Broadcast()
	}
}

func (f *streamFile) hash(chunks <-chan int) {
	h, from := sha256.New(), 0
	for to := range chunks {
		at := from % streamRing
		h.Write(f.ring[at : at+to-from])
		from = to
		f.mu.Lock()
		f.hashedTo = to
		f.mu.Unlock()
		f.cond.Broadcast()
	}
	f.mu.Lock()
	f.hashed, f.ok = true, from == f.size && bytes.Equal(h.Sum(nil), f.want)
	f.mu.Unlock()
	f.cond.Broadcast()
}

func (f *streamFile) fail(err error) {
	fmt.Fprintln(os.Stderr, "streamfs:", err)
	f.stop(err)
}

// stop ends the stream with err: the GET is closed once it waits for room,
// and READs still waiting get EIO.
func (f *streamFile) stop(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
	f.cond.Broadcast()
}

// streamFSClient is the peer client that mounts the streaming floor.
func streamFSClient(www, url, sum string) peerClient {
	return fuseHelperClient(streamFSName, streamFSArg, www, bigRelPath, url+bigRelPath, sum)
}

// fuseHelperClient mounts one of the bench's own FUSE file systems: the
// bench runs itself as "bench arg src DIR rest...".
func fuseHelperClient(name, arg, src string, rest ...string) peerClient {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return peerClient{name: name, exe: exe, umount: []string{"umount"},
		mountFn: func(dir, _ string) error {
			cmd := exec.Command(exe, append([]string{arg, src, dir}, rest...)...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := cmd.Start(); err != nil {
				return err
			}
			go cmd.Wait() // reaped when it ends
			return waitMounted(dir, 2*time.Minute)
		}}
}
