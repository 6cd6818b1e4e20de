package main

import (
	"math"
	"testing"
)

// The --max-rate row's figure: the most requests in any 1-s window that
// starts at a request.
func TestMaxInWindow(t *testing.T) {
	for _, tc := range []struct {
		times []float64
		want  int
	}{
		{nil, 0},
		{[]float64{5}, 1},
		{[]float64{0, 0.1, 0.2, 0.99, 1.0, 1.5}, 4},  // [0, 1) holds four; 1.0 is out
		{[]float64{1.5, 0, 1.0, 0.99, 0.2, 0.1}, 4},  // unsorted
		{[]float64{0, 0.5, 1.2, 1.4, 1.45, 2.1}, 4},  // [0.5, 1.5)
		{[]float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 1}, // exactly 1 a second
	} {
		if got := maxInWindow(tc.times, 1); got != tc.want {
			t.Errorf("maxInWindow(%v) = %d, want %d", tc.times, got, tc.want)
		}
	}
}

// A request's bytes are spread over its time, arrival ($msec less
// $request_time) to end ($msec).
func TestBytesPerWindow(t *testing.T) {
	entries := []logEntry{
		{end: 110, dur: 10, bytes: 1000}, // 100 to 110: all in the first window
		{end: 115, dur: 10, bytes: 1000}, // 105 to 115: half in each
		{end: 125, dur: 0, bytes: 7},     // no duration: at its end
		{end: 131, dur: 0, bytes: 9},     // in the partial window, left out
	}
	got := bytesPerWindow(entries, 100, 132, 10)
	want := []float64{1500, 500, 7}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Errorf("window %d: %v, want %v", i, got[i], want[i])
		}
	}
}

func TestParseThrottleLog(t *testing.T) {
	text := `1700000000.123 0.002 200 2048 GET "/data/d0000/f0000000.txt" HTTP/1.1 "-"
1700000000.200 0.000 429 169 GET "/data/d0000/f0000001.txt" HTTP/2.0 "-"
garbage
1700000001.000 0.500 503 197 GET "/resourcelist.xml" HTTP/1.1 "bytes=0-1"
`
	es := parseThrottleLog(text)
	if len(es) != 3 {
		t.Fatalf("%d entries, want 3: %+v", len(es), es)
	}
	if es[0].status != 200 || es[0].bytes != 2048 || es[0].uri != "/data/d0000/f0000000.txt" || es[0].proto != "HTTP/1.1" || math.Abs(es[0].start()-1700000000.121) > 1e-6 {
		t.Errorf("first entry: %+v", es[0])
	}
	if c := countLog(es); c.total != 3 || c.refused != 2 {
		t.Errorf("countLog = %+v, want 3 requests, 2 refused", c)
	}
}
