package hostile

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"time"
)

// First applies f to the first n requests only.
func First(n int64, f Fault) Fault {
	return func(w http.ResponseWriter, r *http.Request, body []byte, i int64) bool {
		return i <= n && f(w, r, body, i)
	}
}

// Sometimes applies f to a fraction p of requests, at random.
func Sometimes(p float64, f Fault) Fault {
	return func(w http.ResponseWriter, r *http.Request, body []byte, i int64) bool {
		return rand.Float64() < p && f(w, r, body, i)
	}
}

// Status answers with code and, if set, a Retry-After header.
func Status(code int, retryAfter string) Fault {
	return func(w http.ResponseWriter, r *http.Request, _ []byte, _ int64) bool {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		http.Error(w, http.StatusText(code), code)
		return true
	}
}

// ResetAfter answers the range asked for with honest headers (etag, if
// not empty, as ETag), sends sent bytes of it and resets the connection.
func ResetAfter(sent int, etag string) Fault {
	return func(w http.ResponseWriter, r *http.Request, body []byte, _ int64) bool {
		first, last := rangeOf(r, len(body))
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return false
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes %d-%d/%d\r\n", first, last, len(body))
		if etag != "" {
			fmt.Fprintf(buf, "ETag: %s\r\n", etag)
		}
		fmt.Fprintf(buf, "Content-Length: %d\r\n\r\n", last-first+1)
		_, _ = buf.Write(body[first:min(first+sent, last+1)])
		_ = buf.Flush()
		reset(conn)
		return true
	}
}

// Truncate answers with honest headers and only the first sent bytes of
// the range, then closes the connection cleanly (a short body).
func Truncate(sent int) Fault {
	return func(w http.ResponseWriter, r *http.Request, body []byte, _ int64) bool {
		first, last := rangeOf(r, len(body))
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", first, last, len(body)))
		w.Header().Set("Content-Length", strconv.Itoa(last-first+1))
		w.WriteHeader(http.StatusPartialContent)
		_, _ = w.Write(body[first:min(first+sent, last+1)])
		panic(http.ErrAbortHandler) // close without finishing the body
	}
}

// Drip answers the range a byte per interval.
func Drip(interval time.Duration) Fault {
	return func(w http.ResponseWriter, r *http.Request, body []byte, _ int64) bool {
		first, last := rangeOf(r, len(body))
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", first, last, len(body)))
		w.Header().Set("Content-Length", strconv.Itoa(last-first+1))
		w.WriteHeader(http.StatusPartialContent)
		rc := http.NewResponseController(w)
		for i := first; i <= last; i++ {
			if _, err := w.Write(body[i : i+1]); err != nil {
				return true
			}
			_ = rc.Flush()
			select {
			case <-r.Context().Done():
				return true
			case <-time.After(interval):
			}
		}
		return true
	}
}

// RedirectLoop redirects into a loop that never ends.
func RedirectLoop() Fault {
	return func(w http.ResponseWriter, r *http.Request, _ []byte, _ int64) bool {
		http.Redirect(w, r, "/loop/1", http.StatusFound)
		return true
	}
}

// Then runs do (once per request) before answering properly.
func Then(do func(n int64)) Fault {
	return func(_ http.ResponseWriter, _ *http.Request, _ []byte, n int64) bool {
		do(n)
		return false
	}
}

// rangeOf parses "bytes=A-B" or "bytes=A-" (whole body without one).
func rangeOf(r *http.Request, size int) (first, last int) {
	first, last = 0, size-1
	var a, b int
	if n, _ := fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &a, &b); n >= 1 {
		first = a
		if n == 2 {
			last = min(b, size-1)
		}
	}
	return first, last
}

// reset closes conn with a TCP RST.
func reset(conn net.Conn) {
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
}
