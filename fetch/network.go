package fetch

import (
	"sync"
	"time"
)

// The network each origin is measured as its requests complete: the round
// trip (the time to a response's headers), the bandwidth (of bodies large
// enough to tell), and whether it speaks HTTP/2. The file system sizes its
// windows, and the dump reader its gaps, from them instead of fixed
// constants.
const (
	// MaxStreams bounds the requests in flight to an origin that speaks
	// HTTP/2: they share one connection, as streams (a server's own limit
	// is 100 or more by RFC 9113's advice; nginx's is 128, Go's 250).
	MaxStreams = 128
	// bandwidthMin is the smallest body measured for bandwidth: a smaller
	// one's time is mostly its round trip.
	bandwidthMin = 64 << 10
	netWeight    = 0.25 // of a new sample in the moving averages
)

// Network is what the requests to one origin measured; zero values are
// not measured yet.
type Network struct {
	RTT       time.Duration // moving average of the time to a response's headers
	Bandwidth float64       // bytes per second, moving average of large bodies
	HTTP2     bool          // its last response came over HTTP/2
	Pipelined bool          // its last response came through the pipeline (pipeline.go)
	Samples   int           // responses measured
}

// networks is the Network of each origin.
type networks struct {
	mu sync.Mutex
	m  map[string]*Network
}

func (ns *networks) of(origin string) *Network {
	if ns.m == nil {
		ns.m = map[string]*Network{}
	}
	n, ok := ns.m[origin]
	if !ok {
		n = &Network{}
		ns.m[origin] = n
	}
	return n
}

// response records a response's headers, which came rtt after its
// request was sent.
func (ns *networks) response(origin string, rtt time.Duration, http2, pipelined bool) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	n := ns.of(origin)
	n.RTT = time.Duration(average(float64(n.RTT), float64(rtt)))
	n.HTTP2 = http2
	n.Pipelined = pipelined
	n.Samples++
}

// body records a body of bytes read in took, after its headers.
func (ns *networks) body(origin string, bytes int64, took time.Duration) {
	if bytes < bandwidthMin || took <= 0 {
		return
	}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	n := ns.of(origin)
	n.Bandwidth = average(n.Bandwidth, float64(bytes)/took.Seconds())
}

// get returns a copy of origin's Network (zero when not measured yet).
func (ns *networks) get(origin string) Network {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if n, ok := ns.m[origin]; ok {
		return *n
	}
	return Network{}
}

// average is the moving average of avg with a new sample (the sample alone
// when there was none).
func average(avg, sample float64) float64 {
	if avg == 0 {
		return sample
	}
	return avg + netWeight*(sample-avg)
}

// Network returns what the requests to rawURL's origin measured.
func (c *Client) Network(rawURL string) Network {
	c.nets.mu.Lock()
	defer c.nets.mu.Unlock()
	if n, ok := c.nets.m[originOf(rawURL)]; ok {
		return *n
	}
	return Network{}
}

// Busiest returns the Network of the origin that most responses came
// from: the Source's files' host, once a mount reads.
func (c *Client) Busiest() Network {
	c.nets.mu.Lock()
	defer c.nets.mu.Unlock()
	var best Network
	for _, n := range c.nets.m {
		if n.Samples > best.Samples {
			best = *n
		}
	}
	return best
}

// InFlight is how many requests to the busiest origin are worth having in
// flight at once: MaxStreams on one connection where it speaks HTTP/2,
// else the connections allowed per host (also where content GETs are
// pipelined on some of them: pipeline.go).
func (c *Client) InFlight() int { return c.inFlight(c.Busiest()) }

// inFlight is how many requests to a host of Network n are worth having in
// flight at once.
func (c *Client) inFlight(n Network) int {
	if n.HTTP2 {
		return MaxStreams
	}
	return c.opts.MaxConnsPerHost
}
