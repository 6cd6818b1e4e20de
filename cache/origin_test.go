package cache

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"rsfs/resourcesync"
)

// memOrigin serves a byte slice, counting calls, with knobs for misbehaving
// servers.
type memOrigin struct {
	data        []byte
	ignoreRange bool          // answer every range with the rest of the content (toEnd)
	gate        chan struct{} // when set, each OpenRange from gateFrom on waits for a token or ctx
	gateFrom    int64
	gateTo      int64 // when positive, OpenRange from gateTo on is not gated
	calls       atomic.Int64
	cancelled   atomic.Int64 // OpenRange calls that saw their ctx end at the gate

	mu     sync.Mutex
	ranges [][2]int64
}

func (o *memOrigin) OpenRange(ctx context.Context, off, n int64) (io.ReadCloser, bool, error) {
	o.calls.Add(1)
	o.mu.Lock()
	o.ranges = append(o.ranges, [2]int64{off, n})
	o.mu.Unlock()
	if o.gate != nil && off >= o.gateFrom && (o.gateTo <= 0 || off < o.gateTo) {
		select {
		case <-o.gate:
		case <-ctx.Done():
			o.cancelled.Add(1)
			return nil, false, ctx.Err()
		}
	}
	if off > int64(len(o.data)) {
		off = int64(len(o.data))
	}
	if o.ignoreRange {
		return io.NopCloser(bytes.NewReader(o.data[off:])), true, nil
	}
	end := min(off+n, int64(len(o.data)))
	return io.NopCloser(bytes.NewReader(o.data[off:end])), false, nil
}

// offsets returns the offsets requested so far.
func (o *memOrigin) offsets() []int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	var offs []int64
	for _, r := range o.ranges {
		offs = append(offs, r[0])
	}
	return offs
}

// longOrigin answers every range with n+extra bytes and toEnd false.
type longOrigin struct{ data []byte }

func (o longOrigin) OpenRange(_ context.Context, off, n int64) (io.ReadCloser, bool, error) {
	return io.NopCloser(bytes.NewReader(o.data[off:])), false, nil
}

func randomBytes(n int, seed uint64) []byte {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	b := make([]byte, n)
	rand.NewChaCha8(key).Read(b)
	return b
}

func sha256Of(b []byte) []resourcesync.Hash {
	s := sha256.Sum256(b)
	return []resourcesync.Hash{{Alg: "sha-256", Value: hex.EncodeToString(s[:])}}
}

func md5Of(b []byte) resourcesync.Hash {
	s := md5.Sum(b)
	return resourcesync.Hash{Alg: "md5", Value: hex.EncodeToString(s[:])}
}

func wrongSHA256() []resourcesync.Hash {
	return sha256Of([]byte("something else entirely"))
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond until it holds or a timeout passes.
// hangBound bounds every wait of these tests on an event: only a hang
// reaches it, so it is generous; a loaded machine (CI, stress-ng) is slow,
// not stuck (issue 44).
const hangBound = 30 * time.Second

func eventually(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(hangBound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// readAll reads a File sequentially in chunks and returns the bytes and the
// error of each read.
func readAll(ctx context.Context, f *File, chunk int) ([]byte, []error) {
	var out []byte
	var errs []error
	buf := make([]byte, chunk)
	for off := int64(0); ; off += int64(chunk) {
		n, err := f.ReadAt(ctx, buf, off)
		out = append(out, buf[:n]...)
		errs = append(errs, err)
		if err != nil {
			return out, errs
		}
	}
}
