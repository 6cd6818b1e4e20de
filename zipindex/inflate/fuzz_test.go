package inflate

import (
	"bytes"
	"compress/flate"
	"encoding/hex"
	"errors"
	"io"
	"slices"
	"testing"
)

// maxOut caps the output of one decode in the fuzz targets: a deflate
// stream expands up to 1032 times, so a short input can ask for a lot, and
// an input that takes long stalls the fuzzer while it minimizes it. 256 KiB
// is 8 windows.
const maxOut = 256 << 10

// maxData caps FuzzResume's data: three windows, and short enough for
// thousands of execs in CI's 10 s.
const maxData = 96 << 10

// maxResumes caps the boundaries one fuzz input resumes at (each resumed
// decode reads up to maxOut).
const maxResumes = 16

// errKind names the kind of a decoding error, which a resumed decoder must
// share with the decoder that ran from the start (its offsets count from
// another start).
func errKind(err error) string {
	var corrupt CorruptInputError
	switch {
	case err == nil:
		return "none"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected EOF"
	case errors.As(err, &corrupt):
		return "corrupt input"
	}
	return "other: " + err.Error()
}

// errText is an error's text, or "" for none.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// decode reads the stream with the copy from its start, up to maxOut bytes,
// and returns the output, the boundaries it reported, with the windows of
// those at the indexes in windows, and the error. (A stream of many short
// blocks has many boundaries, and copying the window of each is slow.)
func decode(stream []byte, windows []int) ([]byte, []saved, error) {
	var points []saved
	d := NewDecoder(bytes.NewReader(stream), Options{OnBlock: func(b Boundary) {
		p := saved{in: b.InBits, out: b.Out}
		if slices.Contains(windows, len(points)) {
			p.window = b.Window(nil)
		}
		points = append(points, p)
	}})
	out, err := io.ReadAll(io.LimitReader(d, maxOut))
	return out, points, err
}

// decodeToResume decodes the stream twice: once to find its boundaries,
// then again to keep the windows of those chosen by chosen(pick). It
// returns the output, the boundaries, the chosen indexes and the error.
func decodeToResume(t *testing.T, stream []byte, pick uint16) ([]byte, []saved, []int, error) {
	t.Helper()
	_, points, _ := decode(stream, nil)
	idx := chosen(len(points), pick)
	out, again, err := decode(stream, idx)
	if len(again) != len(points) {
		t.Fatalf("%d boundaries, then %d", len(points), len(again))
	}
	return out, again, idx, err
}

// chosen returns the indexes of up to maxResumes of n boundaries: all of
// them if there are few, else ones spread evenly, the last, and pick's.
func chosen(n int, pick uint16) []int {
	if n <= maxResumes {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	idx := []int{int(pick) % n, n - 1}
	for i := 0; i < maxResumes-2; i++ {
		idx = append(idx, i*n/(maxResumes-2))
	}
	return idx
}

// checkResume resumes the stream at boundary i of points and checks that the
// resumed decoder yields out's tail from there, fails or not as the decoder
// from the start did (err), and reports the same later boundaries.
func checkResume(t *testing.T, stream, out []byte, err error, points []saved, i int) {
	t.Helper()
	p := points[i]
	if p.out > int64(len(out)) {
		t.Fatalf("boundary %d at output %d, past the %d bytes decoded", i, p.out, len(out))
	}
	if want := out[max(0, p.out-maxMatchOffset):p.out]; !bytes.Equal(p.window, want) {
		t.Fatalf("boundary %d (bit %d, output %d): window of %d bytes is not the %d output bytes before it", i, p.in, p.out, len(p.window), len(want))
	}
	var later []saved
	d := NewResumed(bytes.NewReader(stream[p.in/8:]), p.in, p.out, p.window, Options{OnBlock: func(b Boundary) {
		later = append(later, saved{in: b.InBits, out: b.Out})
	}})
	rest, rerr := io.ReadAll(io.LimitReader(d, maxOut-p.out))
	if !bytes.Equal(rest, out[p.out:]) {
		t.Fatalf("resumed at boundary %d (bit %d, output %d): %d bytes, want the %d after it (equal prefix %d)", i, p.in, p.out, len(rest), len(out)-int(p.out), commonPrefix(rest, out[p.out:]))
	}
	if errKind(rerr) != errKind(err) {
		t.Fatalf("resumed at boundary %d (bit %d): error %v, from the start %v", i, p.in, rerr, err)
	}
	if len(later) != len(points)-i {
		t.Fatalf("resumed at boundary %d: %d boundaries, from the start %d after it", i, len(later), len(points)-i)
	}
	for j, b := range later {
		if q := points[i+j]; b.in != q.in || b.out != q.out {
			t.Fatalf("resumed at boundary %d: boundary %d at bit %d output %d, from the start bit %d output %d", i, j, b.in, b.out, q.in, q.out)
		}
	}
}

func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// FuzzAgainstCompressFlate decodes the input as a raw deflate stream with
// the copy and with compress/flate, up to maxOut bytes each. They must agree
// on the output bytes (all of them, also those flushed before an error) and
// on the error by its text: none, io.ErrUnexpectedEOF, or the same
// CorruptInputError offset (the decoding code is upstream's, so even the
// offsets agree). Then, unless the output reached maxOut, a decoder resumed
// at each boundary the copy reported (up to maxResumes of them) must yield
// the rest of the output, the same kind of error (offsets count from where
// it started, so only the kind is compared) and the same later boundaries.
//
// Its corpus in testdata/fuzz keeps two inputs the fuzzer found (in about a
// second each) against copies broken on purpose, which upstream's tests let
// pass: nlit-out-of-range, a stream the copy decoded further without the
// nlit > maxNumLit check (TestNlitOutOfRange's stream fails later anyway),
// and distance-too-far, one it decoded without the check that a match's
// distance is within the history.
func FuzzAgainstCompressFlate(f *testing.F) {
	for _, tc := range streamsTestCases {
		data, err := hex.DecodeString(tc.stream)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, uint16(0))
	}
	f.Add([]byte(truncatedStreamsData), uint16(0))
	for _, v := range readerTruncatedVectors {
		f.Add([]byte(v.input), uint16(0))
	}
	f.Add([]byte(nlitOutOfRange), uint16(0))
	for _, level := range []int{flate.NoCompression, flate.BestSpeed, flate.DefaultCompression, flate.HuffmanOnly} {
		f.Add(compress(f, textLike(2000, 5), level, 700), uint16(1))
	}
	f.Fuzz(func(t *testing.T, stream []byte, pick uint16) {
		want, werr := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(stream)), maxOut))
		got, points, idx, gerr := decodeToResume(t, stream, pick)
		if !bytes.Equal(got, want) {
			t.Fatalf("copy decoded %d bytes, compress/flate %d (equal prefix %d)", len(got), len(want), commonPrefix(got, want))
		}
		if errText(gerr) != errText(werr) {
			t.Fatalf("copy's error %q, compress/flate's %q", errText(gerr), errText(werr))
		}
		if len(got) == maxOut {
			return
		}
		for _, i := range idx {
			checkResume(t, stream, got, gerr, points, i)
		}
	})
}

// compress deflates data with compress/flate at level, flushing after every
// chunk bytes (a sync flush ends a block and adds an empty stored one) if
// chunk is not 0.
func compress(tb testing.TB, data []byte, level, chunk int) []byte {
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, level)
	if err != nil {
		tb.Fatal(err)
	}
	if chunk <= 0 {
		chunk = len(data) + 1
	}
	for i := 0; i < len(data); i += chunk {
		if _, err := w.Write(data[i:min(i+chunk, len(data))]); err != nil {
			tb.Fatal(err)
		}
		if chunk <= len(data) {
			if err := w.Flush(); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzResume compresses data with compress/flate at a fuzzed level
// (HuffmanOnly to BestCompression): the seed grown by repeating it by
// grow*256 bytes, so that matches reach back across the 32 KiB window, and
// cut at maxData, with a sync flush every chunk bytes (at most about 1024
// of them) when chunk is not 0. The copy must decode it to the data; at the
// boundaries chosen (all if there are at most maxResumes, else ones spread
// evenly, the last and pick's) the window must be the 32 KiB of data before
// the boundary, and a decoder resumed there must yield the data's tail from
// there, no error, and the same later boundaries.
func FuzzResume(f *testing.F) {
	for _, tc := range streamsTestCases {
		if tc.want != "fail" {
			want, err := hex.DecodeString(tc.want)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(want, uint8(6), uint16(0), uint8(0), uint16(0))
		}
	}
	for _, v := range readerTruncatedVectors {
		f.Add([]byte(v.output), uint8(3), uint16(3), uint8(0), uint16(0))
	}
	f.Add([]byte("hello, world"), uint8(2), uint16(5), uint8(160), uint16(7))
	f.Add(textLike(3000, 11), uint8(0), uint16(1000), uint8(255), uint16(3))
	// Short seeds, grown: the mutator is slow on long ones.
	f.Add(textLike(4000, 12), uint8(8), uint16(0), uint8(200), uint16(0))
	f.Add(textLike(2000, 13), uint8(11), uint16(4096), uint8(100), uint16(9))
	f.Fuzz(func(t *testing.T, seed []byte, level uint8, chunk uint16, grow uint8, pick uint16) {
		data := seed
		if n := len(seed) + int(grow)<<8; n > len(seed) && len(seed) > 0 {
			data = bytes.Repeat(seed, n/len(seed)+1)[:n]
		}
		data = data[:min(len(data), maxData)]
		lvl := int(level)%12 - 2
		// At most about 1024 flushes: each is a boundary or two.
		flushEvery := int(chunk)
		if flushEvery != 0 {
			flushEvery = max(flushEvery, len(data)/1024)
		}
		stream := compress(t, data, lvl, flushEvery)
		got, points, idx, err := decodeToResume(t, stream, pick)
		if err != nil {
			t.Fatalf("level %d: %v", lvl, err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("level %d: decoded %d bytes, want %d (equal prefix %d)", lvl, len(got), len(data), commonPrefix(got, data))
		}
		if len(points) == 0 || points[0].in != 0 || points[0].out != 0 {
			t.Fatalf("level %d: %d boundaries, want the first at bit 0 and output 0", lvl, len(points))
		}
		for _, i := range idx {
			checkResume(t, stream, data, nil, points, i)
		}
	})
}
