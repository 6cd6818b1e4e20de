package termui

import "time"

// Meter is the bytes a second over the last few seconds.
type Meter struct {
	samples [20]sample
	n, next int
}

type sample struct {
	at    time.Time
	bytes int64
}

// meterWindow is how far back the rate looks.
const meterWindow = 3 * time.Second

// Add notes that bytes had come by at.
func (m *Meter) Add(at time.Time, bytes int64) {
	if m.n > 0 {
		lastAt := m.samples[(m.next-1+len(m.samples))%len(m.samples)].at
		if at.Sub(lastAt) < meterWindow/time.Duration(len(m.samples)) {
			return // enough samples for the window
		}
	}
	m.samples[m.next] = sample{at, bytes}
	m.next = (m.next + 1) % len(m.samples)
	m.n = min(m.n+1, len(m.samples))
}

// PerSecond is the rate between the oldest sample within the window and
// the newest; 0 before there are two.
func (m *Meter) PerSecond() float64 {
	if m.n < 2 {
		return 0
	}
	newest := m.samples[(m.next-1+len(m.samples))%len(m.samples)]
	oldest := newest
	for i := 2; i <= m.n; i++ {
		s := m.samples[(m.next-i+len(m.samples))%len(m.samples)]
		if newest.at.Sub(s.at) > meterWindow {
			break
		}
		oldest = s
	}
	d := newest.at.Sub(oldest.at).Seconds()
	if d <= 0 {
		return 0
	}
	return float64(newest.bytes-oldest.bytes) / d
}
