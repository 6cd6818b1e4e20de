package sourcetest

import (
	"errors"
	"io"
	"sync"
)

// chunkPool holds the buffers bodies are generated through.
var chunkPool = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// Generated bodies are printable text: 63 characters per line and a newline,
// each character drawn from a splitmix64 stream keyed by (seed, index,
// version). Any byte can be computed from its offset, so a body is an
// io.ReadSeeker that holds no bytes.

const (
	golden     = 0x9E3779B97F4A7C15
	lineLength = 64
	alphabet   = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ."
)

// mix64 is the splitmix64 finaliser.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// bodyKey is the stream key of version v of generated resource i.
func bodyKey(seed int64, i int, v int64) uint64 {
	k := mix64(uint64(seed)*golden + uint64(i) + 1)
	return mix64(k ^ (uint64(v)+1)*0xD6E8FEB86659FD93)
}

// generatedSize is the body size chosen by key k within [min, max].
func generatedSize(k uint64, min, max int64) int64 {
	span := uint64(max-min) + 1
	return min + int64(mix64(k^0x5851F42D4C957F2D)%span)
}

// fillBody writes the bytes of stream k starting at offset off into dst.
// Byte p is byte p%8 of word p/8 mapped through the alphabet, or a newline
// at the end of each line.
func fillBody(dst []byte, k uint64, off int64) {
	n := 0
	for n < len(dst) && (off+int64(n))%8 != 0 { // unaligned head
		dst[n] = bodyByte(k, off+int64(n))
		n++
	}
	for ; len(dst)-n >= 8; n += 8 { // whole words
		j := uint64(off+int64(n)) / 8
		w := mix64(k + j*golden)
		d := dst[n : n+8 : n+8]
		d[0], d[1], d[2], d[3] = alphabet[w&63], alphabet[w>>8&63], alphabet[w>>16&63], alphabet[w>>24&63]
		d[4], d[5], d[6], d[7] = alphabet[w>>32&63], alphabet[w>>40&63], alphabet[w>>48&63], alphabet[w>>56&63]
		if j%(lineLength/8) == lineLength/8-1 {
			d[7] = '\n'
		}
	}
	for ; n < len(dst); n++ { // tail
		dst[n] = bodyByte(k, off+int64(n))
	}
}

// bodyByte is byte p of stream k.
func bodyByte(k uint64, p int64) byte {
	if p%lineLength == lineLength-1 {
		return '\n'
	}
	w := mix64(k + uint64(p/8)*golden)
	return alphabet[(w>>(8*(p%8)))&63]
}

// genBody is a generated body: a stream key and a size.
type genBody struct {
	key  uint64
	size int64
}

// bytes returns the whole body.
func (g genBody) bytes() []byte {
	b := make([]byte, g.size)
	fillBody(b, g.key, 0)
	return b
}

// reader returns an io.ReadSeeker over the body.
func (g genBody) reader() io.ReadSeeker { return &genReader{body: g} }

// writeTo writes the whole body to w in chunks.
func (g genBody) writeTo(w io.Writer) error {
	bp := chunkPool.Get().(*[]byte)
	defer chunkPool.Put(bp)
	buf := *bp
	for off := int64(0); off < g.size; {
		n := min(int64(len(buf)), g.size-off)
		fillBody(buf[:n], g.key, off)
		if _, err := w.Write(buf[:n]); err != nil {
			return err
		}
		off += n
	}
	return nil
}

// genReader reads and seeks a generated body.
type genReader struct {
	body genBody
	off  int64
}

func (r *genReader) Read(p []byte) (int, error) {
	if r.off >= r.body.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), r.body.size-r.off)
	fillBody(p[:n], r.body.key, r.off)
	r.off += n
	return int(n), nil
}

func (r *genReader) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = r.off + offset
	case io.SeekEnd:
		abs = r.body.size + offset
	default:
		return 0, errors.New("genReader.Seek: invalid whence")
	}
	if abs < 0 {
		return 0, errors.New("genReader.Seek: negative position")
	}
	r.off = abs
	return abs, nil
}
