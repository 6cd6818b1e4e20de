// Copyright 2009 The Go Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package inflate

// The decoder tests of Go go1.26.8's compress/flate (flate_test.go,
// inflate_test.go, reader_test.go, dict_decoder_test.go, and TestReaderDict
// from deflate_test.go), under their upstream names and with their upstream
// comments, adapted to this package's API: NewReader below stands for
// upstream's, compress/flate's writer for the package's own, a Decoder's
// decompressor is d.f, and NewReaderDict is NewResumed at the start. Left
// out because the copy has no such API: TestReset, TestResetDict and
// TestReaderReusesReaderBuffer (Reset and the bufio fallback); the writer's
// tests round-trip through the decoder too, but they test the writer, and
// FuzzResume does the round trip here.

import (
	"bytes"
	"compress/flate"
	"encoding/hex"
	"io"
	"strings"
	"testing"
)

// NewReader is upstream's NewReader as the restored tests call it.
func NewReader(r Reader) *Decoder { return NewDecoder(r, Options{}) }

// windowSize is upstream's (deflate.go): the writer's window, which is also
// the decoder's dictionary size.
const windowSize = maxMatchOffset

// nlitOutOfRange is the stream of upstream's TestNlitOutOfRange, also a seed
// of FuzzAgainstCompressFlate.
const nlitOutOfRange = "\xfc\xfe\x36\xe7\x5e\x1c\xef\xb3\x55\x58\x77\xb6\x56\xb5\x43\xf4" +
	"\x6f\xf2\xd2\xe6\x3d\x99\xa0\x85\x8c\x48\xeb\xf8\xda\x83\x04\x2a" +
	"\x75\xc4\xf8\x0f\x12\x11\xb9\xb4\x4b\x09\xa0\xbe\x8b\x91\x4c"

// truncatedStreamsData is the stream of upstream's TestTruncatedStreams.
const truncatedStreamsData = "\x00\f\x00\xf3\xffhello, world\x01\x00\x00\xff\xff"

// streamsTestCases is the table of upstream's TestStreams, declared
// outside it for the fuzz targets' seeds.
var streamsTestCases = []struct {
	desc   string // Description of the stream
	stream string // Hexstring of the input DEFLATE stream
	want   string // Expected result. Use "fail" to expect failure
}{{
	"degenerate HCLenTree",
	"05e0010000000000100000000000000000000000000000000000000000000000" +
		"00000000000000000004",
	"fail",
}, {
	"complete HCLenTree, empty HLitTree, empty HDistTree",
	"05e0010400000000000000000000000000000000000000000000000000000000" +
		"00000000000000000010",
	"fail",
}, {
	"empty HCLenTree",
	"05e0010000000000000000000000000000000000000000000000000000000000" +
		"00000000000000000010",
	"fail",
}, {
	"complete HCLenTree, complete HLitTree, empty HDistTree, use missing HDist symbol",
	"000100feff000de0010400000000100000000000000000000000000000000000" +
		"0000000000000000000000000000002c",
	"fail",
}, {
	"complete HCLenTree, complete HLitTree, degenerate HDistTree, use missing HDist symbol",
	"000100feff000de0010000000000000000000000000000000000000000000000" +
		"00000000000000000610000000004070",
	"fail",
}, {
	"complete HCLenTree, empty HLitTree, empty HDistTree",
	"05e0010400000000100400000000000000000000000000000000000000000000" +
		"0000000000000000000000000008",
	"fail",
}, {
	"complete HCLenTree, empty HLitTree, degenerate HDistTree",
	"05e0010400000000100400000000000000000000000000000000000000000000" +
		"0000000000000000000800000008",
	"fail",
}, {
	"complete HCLenTree, degenerate HLitTree, degenerate HDistTree, use missing HLit symbol",
	"05e0010400000000100000000000000000000000000000000000000000000000" +
		"0000000000000000001c",
	"fail",
}, {
	"complete HCLenTree, complete HLitTree, too large HDistTree",
	"edff870500000000200400000000000000000000000000000000000000000000" +
		"000000000000000000080000000000000004",
	"fail",
}, {
	"complete HCLenTree, complete HLitTree, empty HDistTree, excessive repeater code",
	"edfd870500000000200400000000000000000000000000000000000000000000" +
		"000000000000000000e8b100",
	"fail",
}, {
	"complete HCLenTree, complete HLitTree, empty HDistTree of normal length 30",
	"05fd01240000000000f8ffffffffffffffffffffffffffffffffffffffffffff" +
		"ffffffffffffffffff07000000fe01",
	"",
}, {
	"complete HCLenTree, complete HLitTree, empty HDistTree of excessive length 31",
	"05fe01240000000000f8ffffffffffffffffffffffffffffffffffffffffffff" +
		"ffffffffffffffffff07000000fc03",
	"fail",
}, {
	"complete HCLenTree, over-subscribed HLitTree, empty HDistTree",
	"05e001240000000000fcffffffffffffffffffffffffffffffffffffffffffff" +
		"ffffffffffffffffff07f00f",
	"fail",
}, {
	"complete HCLenTree, under-subscribed HLitTree, empty HDistTree",
	"05e001240000000000fcffffffffffffffffffffffffffffffffffffffffffff" +
		"fffffffffcffffffff07f00f",
	"fail",
}, {
	"complete HCLenTree, complete HLitTree with single code, empty HDistTree",
	"05e001240000000000f8ffffffffffffffffffffffffffffffffffffffffffff" +
		"ffffffffffffffffff07f00f",
	"01",
}, {
	"complete HCLenTree, complete HLitTree with multiple codes, empty HDistTree",
	"05e301240000000000f8ffffffffffffffffffffffffffffffffffffffffffff" +
		"ffffffffffffffffff07807f",
	"01",
}, {
	"complete HCLenTree, complete HLitTree, degenerate HDistTree, use valid HDist symbol",
	"000100feff000de0010400000000100000000000000000000000000000000000" +
		"0000000000000000000000000000003c",
	"00000000",
}, {
	"complete HCLenTree, degenerate HLitTree, degenerate HDistTree",
	"05e0010400000000100000000000000000000000000000000000000000000000" +
		"0000000000000000000c",
	"",
}, {
	"complete HCLenTree, degenerate HLitTree, empty HDistTree",
	"05e0010400000000100000000000000000000000000000000000000000000000" +
		"00000000000000000004",
	"",
}, {
	"complete HCLenTree, complete HLitTree, empty HDistTree, spanning repeater code",
	"edfd870500000000200400000000000000000000000000000000000000000000" +
		"000000000000000000e8b000",
	"",
}, {
	"complete HCLenTree with length codes, complete HLitTree, empty HDistTree",
	"ede0010400000000100000000000000000000000000000000000000000000000" +
		"0000000000000000000400004000",
	"",
}, {
	"complete HCLenTree, complete HLitTree, degenerate HDistTree, use valid HLit symbol 284 with count 31",
	"000100feff00ede0010400000000100000000000000000000000000000000000" +
		"000000000000000000000000000000040000407f00",
	"0000000000000000000000000000000000000000000000000000000000000000" +
		"0000000000000000000000000000000000000000000000000000000000000000" +
		"0000000000000000000000000000000000000000000000000000000000000000" +
		"0000000000000000000000000000000000000000000000000000000000000000" +
		"0000000000000000000000000000000000000000000000000000000000000000" +
		"0000000000000000000000000000000000000000000000000000000000000000" +
		"0000000000000000000000000000000000000000000000000000000000000000" +
		"0000000000000000000000000000000000000000000000000000000000000000" +
		"000000",
}, {
	"complete HCLenTree, complete HLitTree, degenerate HDistTree, use valid HLit and HDist symbols",
	"0cc2010d00000082b0ac4aff0eb07d27060000ffff",
	"616263616263",
}, {
	"fixed block, use reserved symbol 287",
	"33180700",
	"fail",
}, {
	"raw block",
	"010100feff11",
	"11",
}, {
	"issue 10426 - over-subscribed HCLenTree causes a hang",
	"344c4a4e494d4b070000ff2e2eff2e2e2e2e2eff",
	"fail",
}, {
	"issue 11030 - empty HDistTree unexpectedly leads to error",
	"05c0070600000080400fff37a0ca",
	"",
}, {
	"issue 11033 - empty HDistTree unexpectedly leads to error",
	"050fb109c020cca5d017dcbca044881ee1034ec149c8980bbc413c2ab35be9dc" +
		"b1473449922449922411202306ee97b0383a521b4ffdcf3217f9f7d3adb701",
	"3130303634342068652e706870005d05355f7ed957ff084a90925d19e3ebc6d0" +
		"c6d7",
}}

// readerTruncatedVectors is the table of upstream's TestReaderTruncated.
var readerTruncatedVectors = []struct{ input, output string }{
	{"\x00", ""},
	{"\x00\f", ""},
	{"\x00\f\x00", ""},
	{"\x00\f\x00\xf3\xff", ""},
	{"\x00\f\x00\xf3\xffhello", "hello"},
	{"\x00\f\x00\xf3\xffhello, world", "hello, world"},
	{"\x02", ""},
	{"\xf2H\xcd", "He"},
	{"\xf2H͙0a\u0084\t", "Hel\x90\x90\x90\x90\x90"},
	{"\xf2H͙0a\u0084\t\x00", "Hel\x90\x90\x90\x90\x90"},
}

// From flate_test.go.

// The following test should not panic.
func TestIssue5915(t *testing.T) {
	bits := []int{4, 0, 0, 6, 4, 3, 2, 3, 3, 4, 4, 5, 0, 0, 0, 0, 5, 5, 6,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 8, 6, 0, 11, 0, 8, 0, 6, 6, 10, 8}
	var h huffmanDecoder
	if h.init(bits) {
		t.Fatalf("Given sequence of bits is bad, and should not succeed.")
	}
}

// The following test should not panic.
func TestIssue5962(t *testing.T) {
	bits := []int{4, 0, 0, 6, 4, 3, 2, 3, 3, 4, 4, 5, 0, 0, 0, 0,
		5, 5, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 11}
	var h huffmanDecoder
	if h.init(bits) {
		t.Fatalf("Given sequence of bits is bad, and should not succeed.")
	}
}

// The following test should not panic.
func TestIssue6255(t *testing.T) {
	bits1 := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 11}
	bits2 := []int{11, 13}
	var h huffmanDecoder
	if !h.init(bits1) {
		t.Fatalf("Given sequence of bits is good and should succeed.")
	}
	if h.init(bits2) {
		t.Fatalf("Given sequence of bits is bad and should not succeed.")
	}
}

func TestInvalidEncoding(t *testing.T) {
	// Initialize Huffman decoder to recognize "0".
	var h huffmanDecoder
	if !h.init([]int{1}) {
		t.Fatal("Failed to initialize Huffman decoder")
	}

	// Initialize decompressor with invalid Huffman coding.
	var f decompressor
	f.r = bytes.NewReader([]byte{0xff})

	_, err := f.huffSym(&h)
	if err == nil {
		t.Fatal("Should have rejected invalid bit sequence")
	}
}

func TestInvalidBits(t *testing.T) {
	oversubscribed := []int{1, 2, 3, 4, 4, 5}
	incomplete := []int{1, 2, 4, 4}
	var h huffmanDecoder
	if h.init(oversubscribed) {
		t.Fatal("Should reject oversubscribed bit-length set")
	}
	if h.init(incomplete) {
		t.Fatal("Should reject incomplete bit-length set")
	}
}

func TestStreams(t *testing.T) {
	// To verify any of these hexstrings as valid or invalid flate streams
	// according to the C zlib library, you can use the Python wrapper library:
	// >>> hex_string = "010100feff11"
	// >>> import zlib
	// >>> zlib.decompress(hex_string.decode("hex"), -15) # Negative means raw DEFLATE
	// '\x11'

	testCases := streamsTestCases

	for i, tc := range testCases {
		data, err := hex.DecodeString(tc.stream)
		if err != nil {
			t.Fatal(err)
		}
		data, err = io.ReadAll(NewReader(bytes.NewReader(data)))
		if tc.want == "fail" {
			if err == nil {
				t.Errorf("#%d (%s): got nil error, want non-nil", i, tc.desc)
			}
		} else {
			if err != nil {
				t.Errorf("#%d (%s): %v", i, tc.desc, err)
				continue
			}
			if got := hex.EncodeToString(data); got != tc.want {
				t.Errorf("#%d (%s):\ngot  %q\nwant %q", i, tc.desc, got, tc.want)
			}

		}
	}
}

func TestTruncatedStreams(t *testing.T) {
	const data = truncatedStreamsData

	for i := 0; i < len(data)-1; i++ {
		r := NewReader(strings.NewReader(data[:i]))
		_, err := io.Copy(io.Discard, r)
		if err != io.ErrUnexpectedEOF {
			t.Errorf("io.Copy(%d) on truncated stream: got %v, want %v", i, err, io.ErrUnexpectedEOF)
		}
	}
}

// Verify that flate.Reader.Read returns (n, io.EOF) instead
// of (n, nil) + (0, io.EOF) when possible.
//
// This helps net/http.Transport reuse HTTP/1 connections more
// aggressively.
//
// See https://github.com/google/go-github/pull/317 for background.
func TestReaderEarlyEOF(t *testing.T) {
	t.Parallel()
	testSizes := []int{
		1, 2, 3, 4, 5, 6, 7, 8,
		100, 1000, 10000, 100000,
		128, 1024, 16384, 131072,

		// Testing multiples of windowSize triggers the case
		// where Read will fail to return an early io.EOF.
		windowSize * 1, windowSize * 2, windowSize * 3,
	}

	var maxSize int
	for _, n := range testSizes {
		if maxSize < n {
			maxSize = n
		}
	}

	readBuf := make([]byte, 40)
	data := make([]byte, maxSize)
	for i := range data {
		data[i] = byte(i)
	}

	for _, sz := range testSizes {
		if testing.Short() && sz > windowSize {
			continue
		}
		for _, flush := range []bool{true, false} {
			earlyEOF := true // Do we expect early io.EOF?

			var buf bytes.Buffer
			w, _ := flate.NewWriter(&buf, 5)
			w.Write(data[:sz])
			if flush {
				// If a Flush occurs after all the actual data, the flushing
				// semantics dictate that we will observe a (0, io.EOF) since
				// Read must return data before it knows that the stream ended.
				w.Flush()
				earlyEOF = false
			}
			w.Close()

			r := NewReader(&buf)
			for {
				n, err := r.Read(readBuf)
				if err == io.EOF {
					// If the availWrite == windowSize, then that means that the
					// previous Read returned because the write buffer was full
					// and it just so happened that the stream had no more data.
					// This situation is rare, but unavoidable.
					if r.f.dict.availWrite() == windowSize {
						earlyEOF = false
					}

					if n == 0 && earlyEOF {
						t.Errorf("On size:%d flush:%v, Read() = (0, io.EOF), want (n, io.EOF)", sz, flush)
					}
					if n != 0 && !earlyEOF {
						t.Errorf("On size:%d flush:%v, Read() = (%d, io.EOF), want (0, io.EOF)", sz, flush, n)
					}
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// From inflate_test.go.

func TestReaderTruncated(t *testing.T) {
	vectors := readerTruncatedVectors

	for i, v := range vectors {
		r := strings.NewReader(v.input)
		zr := NewReader(r)
		b, err := io.ReadAll(zr)
		if err != io.ErrUnexpectedEOF {
			t.Errorf("test %d, error mismatch: got %v, want io.ErrUnexpectedEOF", i, err)
		}
		if string(b) != v.output {
			t.Errorf("test %d, output mismatch: got %q, want %q", i, b, v.output)
		}
	}
}

// From reader_test.go.

func TestNlitOutOfRange(t *testing.T) {
	// Trying to decode this bogus flate data, which has a Huffman table
	// with nlit=288, should not panic.
	_, err := io.Copy(io.Discard, NewReader(strings.NewReader(nlitOutOfRange)))
	// Not upstream: the copy also checks that the stream is refused.
	if err == nil {
		t.Fatal("a stream with nlit=288 was accepted")
	}
}

// From deflate_test.go.

func TestReaderDict(t *testing.T) {
	const (
		dict = "hello world"
		text = "hello again world"
	)
	var b bytes.Buffer
	w, err := flate.NewWriter(&b, 5)
	if err != nil {
		t.Fatalf("NewWriter: %v", err)
	}
	w.Write([]byte(dict))
	w.Flush()
	b.Reset()
	w.Write([]byte(text))
	w.Close()

	// NewReaderDict(r, dict) is NewResumed(r, 0, 0, dict, Options{}) here.
	r := NewResumed(&b, 0, 0, []byte(dict), Options{})
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "hello again world" {
		t.Fatalf("read returned %q want %q", string(data), text)
	}
}

// From dict_decoder_test.go.

func TestDictDecoder(t *testing.T) {
	const (
		abc  = "ABC\n"
		fox  = "The quick brown fox jumped over the lazy dog!\n"
		poem = "The Road Not Taken\nRobert Frost\n" +
			"\n" +
			"Two roads diverged in a yellow wood,\n" +
			"And sorry I could not travel both\n" +
			"And be one traveler, long I stood\n" +
			"And looked down one as far as I could\n" +
			"To where it bent in the undergrowth;\n" +
			"\n" +
			"Then took the other, as just as fair,\n" +
			"And having perhaps the better claim,\n" +
			"Because it was grassy and wanted wear;\n" +
			"Though as for that the passing there\n" +
			"Had worn them really about the same,\n" +
			"\n" +
			"And both that morning equally lay\n" +
			"In leaves no step had trodden black.\n" +
			"Oh, I kept the first for another day!\n" +
			"Yet knowing how way leads on to way,\n" +
			"I doubted if I should ever come back.\n" +
			"\n" +
			"I shall be telling this with a sigh\n" +
			"Somewhere ages and ages hence:\n" +
			"Two roads diverged in a wood, and I-\n" +
			"I took the one less traveled by,\n" +
			"And that has made all the difference.\n"
	)

	var poemRefs = []struct {
		dist   int // Backward distance (0 if this is an insertion)
		length int // Length of copy or insertion
	}{
		{0, 38}, {33, 3}, {0, 48}, {79, 3}, {0, 11}, {34, 5}, {0, 6}, {23, 7},
		{0, 8}, {50, 3}, {0, 2}, {69, 3}, {34, 5}, {0, 4}, {97, 3}, {0, 4},
		{43, 5}, {0, 6}, {7, 4}, {88, 7}, {0, 12}, {80, 3}, {0, 2}, {141, 4},
		{0, 1}, {196, 3}, {0, 3}, {157, 3}, {0, 6}, {181, 3}, {0, 2}, {23, 3},
		{77, 3}, {28, 5}, {128, 3}, {110, 4}, {70, 3}, {0, 4}, {85, 6}, {0, 2},
		{182, 6}, {0, 4}, {133, 3}, {0, 7}, {47, 5}, {0, 20}, {112, 5}, {0, 1},
		{58, 3}, {0, 8}, {59, 3}, {0, 4}, {173, 3}, {0, 5}, {114, 3}, {0, 4},
		{92, 5}, {0, 2}, {71, 3}, {0, 2}, {76, 5}, {0, 1}, {46, 3}, {96, 4},
		{130, 4}, {0, 3}, {360, 3}, {0, 3}, {178, 5}, {0, 7}, {75, 3}, {0, 3},
		{45, 6}, {0, 6}, {299, 6}, {180, 3}, {70, 6}, {0, 1}, {48, 3}, {66, 4},
		{0, 3}, {47, 5}, {0, 9}, {325, 3}, {0, 1}, {359, 3}, {318, 3}, {0, 2},
		{199, 3}, {0, 1}, {344, 3}, {0, 3}, {248, 3}, {0, 10}, {310, 3}, {0, 3},
		{93, 6}, {0, 3}, {252, 3}, {157, 4}, {0, 2}, {273, 5}, {0, 14}, {99, 4},
		{0, 1}, {464, 4}, {0, 2}, {92, 4}, {495, 3}, {0, 1}, {322, 4}, {16, 4},
		{0, 3}, {402, 3}, {0, 2}, {237, 4}, {0, 2}, {432, 4}, {0, 1}, {483, 5},
		{0, 2}, {294, 4}, {0, 2}, {306, 3}, {113, 5}, {0, 1}, {26, 4}, {164, 3},
		{488, 4}, {0, 1}, {542, 3}, {248, 6}, {0, 5}, {205, 3}, {0, 8}, {48, 3},
		{449, 6}, {0, 2}, {192, 3}, {328, 4}, {9, 5}, {433, 3}, {0, 3}, {622, 25},
		{615, 5}, {46, 5}, {0, 2}, {104, 3}, {475, 10}, {549, 3}, {0, 4}, {597, 8},
		{314, 3}, {0, 1}, {473, 6}, {317, 5}, {0, 1}, {400, 3}, {0, 3}, {109, 3},
		{151, 3}, {48, 4}, {0, 4}, {125, 3}, {108, 3}, {0, 2},
	}

	var got, want bytes.Buffer
	var dd dictDecoder
	dd.init(1<<11, nil)

	var writeCopy = func(dist, length int) {
		for length > 0 {
			cnt := dd.tryWriteCopy(dist, length)
			if cnt == 0 {
				cnt = dd.writeCopy(dist, length)
			}

			length -= cnt
			if dd.availWrite() == 0 {
				got.Write(dd.readFlush())
			}
		}
	}
	var writeString = func(str string) {
		for len(str) > 0 {
			cnt := copy(dd.writeSlice(), str)
			str = str[cnt:]
			dd.writeMark(cnt)
			if dd.availWrite() == 0 {
				got.Write(dd.readFlush())
			}
		}
	}

	writeString(".")
	want.WriteByte('.')

	str := poem
	for _, ref := range poemRefs {
		if ref.dist == 0 {
			writeString(str[:ref.length])
		} else {
			writeCopy(ref.dist, ref.length)
		}
		str = str[ref.length:]
	}
	want.WriteString(poem)

	writeCopy(dd.histSize(), 33)
	want.Write(want.Bytes()[:33])

	writeString(abc)
	writeCopy(len(abc), 59*len(abc))
	want.WriteString(strings.Repeat(abc, 60))

	writeString(fox)
	writeCopy(len(fox), 9*len(fox))
	want.WriteString(strings.Repeat(fox, 10))

	writeString(".")
	writeCopy(1, 9)
	want.WriteString(strings.Repeat(".", 10))

	writeString(strings.ToUpper(poem))
	writeCopy(len(poem), 7*len(poem))
	want.WriteString(strings.Repeat(strings.ToUpper(poem), 8))

	writeCopy(dd.histSize(), 10)
	want.Write(want.Bytes()[want.Len()-dd.histSize():][:10])

	got.Write(dd.readFlush())
	if got.String() != want.String() {
		t.Errorf("final string mismatch:\ngot  %q\nwant %q", got.String(), want.String())
	}
}
