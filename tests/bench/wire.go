package main

import (
	"bufio"
	"bytes"
	"net/url"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
	"time"
)

// wireSampler counts the bytes a server's sockets on one port had
// acknowledged by the peer (ss's bytes_acked), every tick: what left the
// server on the wire. A server's access log dates a response when its last
// byte entered the socket's send buffer, which the kernel lets grow to
// megabytes (tcp_wmem), so a client reading at 1 MiB/s from a long
// response shows there as faster than it is; the wire does not.
type wireSampler struct {
	port    string
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	conns   map[string]int64 // by peer address: the most acked seen
	samples []wireSample
}

type wireSample struct {
	at    time.Time
	bytes int64 // acked on every connection seen so far
}

var (
	ssPeer  = regexp.MustCompile(`^\S+\s+\S+\s+\S+\s+(\S+)`)
	ssAcked = regexp.MustCompile(`bytes_acked:(\d+)`)
)

// startWire samples the sockets of rawURL's port every tick until stop.
func startWire(rawURL string, tick time.Duration) *wireSampler {
	u, _ := url.Parse(rawURL)
	w := &wireSampler{port: u.Port(), stop: make(chan struct{}), done: make(chan struct{}), conns: map[string]int64{}}
	go func() {
		defer close(w.done)
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			w.sample()
			select {
			case <-w.stop:
				w.sample()
				return
			case <-t.C:
			}
		}
	}()
	return w
}

func (w *wireSampler) sample() {
	out, err := exec.Command("ss", "-tinH", "state", "established", "( sport = :"+w.port+" )").Output()
	if err != nil {
		return
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	// ss prints a socket's line, then its details on the next.
	var peer string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if m := ssPeer.FindStringSubmatch(line); m != nil && !bytes.HasPrefix([]byte(line), []byte("\t")) && !bytes.HasPrefix([]byte(line), []byte(" ")) {
			peer = m[1]
			continue
		}
		if m := ssAcked.FindStringSubmatch(line); m != nil && peer != "" {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			w.conns[peer] = max(w.conns[peer], n)
		}
	}
	var total int64
	for _, n := range w.conns {
		total += n
	}
	w.samples = append(w.samples, wireSample{now, total})
}

// finish stops sampling and returns the bytes sent in each whole window
// of w from the first byte on, and in all from the first byte to the last.
func (w *wireSampler) finish(window time.Duration) (windows []float64, total int64, span time.Duration) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.samples
	first, last := -1, -1
	for i := 1; i < len(s); i++ {
		if s[i].bytes > s[i-1].bytes {
			if first < 0 {
				first = i - 1
			}
			last = i
		}
	}
	if first < 0 {
		return nil, 0, 0
	}
	start := s[first].at
	at := func(t time.Time) int64 { // bytes acked by t (the last sample before it)
		var n int64
		for _, x := range s {
			if x.at.After(t) {
				break
			}
			n = x.bytes
		}
		return n
	}
	for k := 1; start.Add(time.Duration(k) * window).Before(s[last].at); k++ {
		lo, hi := start.Add(time.Duration(k-1)*window), start.Add(time.Duration(k)*window)
		windows = append(windows, float64(at(hi)-at(lo)))
	}
	return windows, s[last].bytes - s[first].bytes, s[last].at.Sub(start)
}
