package fetch

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRangePartial(t *testing.T) {
	data := testContent(1000)
	srv, rec := newServer(t, serveBytes(`"v1"`, data))
	c := newTestClient(t, fastOptions(), srv)
	ctx := testContext(t)

	rb, err := c.Range(ctx, srv.URL+"/f", 100, 50, `"v1"`)
	require.NoError(t, err)
	assert.True(t, rb.Partial)
	assert.Equal(t, int64(1000), rb.Total)
	assert.Equal(t, `"v1"`, rb.ETag)
	assert.Equal(t, data[100:150], readAll(t, rb))
	assert.Equal(t, "bytes=100-149", rec.header(0).Get("Range"))
	assert.Equal(t, `"v1"`, rec.header(0).Get("If-Range"))

	tail, err := c.Range(ctx, srv.URL+"/f", 900, -1, "")
	require.NoError(t, err)
	assert.True(t, tail.Partial)
	assert.Equal(t, data[900:], readAll(t, tail))
	assert.Equal(t, "bytes=900-", rec.header(1).Get("Range"))
	assert.Empty(t, rec.header(1).Get("If-Range"))
}

func TestRangeZeroLengthSendsNothing(t *testing.T) {
	srv, rec := newServer(t, serveBytes(`"v1"`, testContent(10)))
	c := newTestClient(t, fastOptions(), srv)

	rb, err := c.Range(testContext(t), srv.URL+"/f", 3, 0, "")
	require.NoError(t, err)
	assert.Empty(t, readAll(t, rb))
	assert.Zero(t, rec.count.Load())
}

// ignoreRange serves data whole with 200, whatever Range says.
func ignoreRange(etag string, data []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", etag)
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		_, _ = w.Write(data)
	}
}

func TestRangeServerIgnoresRange(t *testing.T) {
	data := testContent(1000)
	srv, _ := newServer(t, ignoreRange(`"v1"`, data))
	c := newTestClient(t, fastOptions(), srv)
	ctx := testContext(t)

	rb, err := c.Range(ctx, srv.URL+"/f", 300, 10, "")
	require.NoError(t, err)
	assert.False(t, rb.Partial)
	assert.Equal(t, int64(1000), rb.Total)
	first := make([]byte, 10)
	_, err = io.ReadFull(rb, first)
	require.NoError(t, err)
	assert.Equal(t, data[300:310], first)
	rest := readAll(t, rb) // callers may read past n to the end
	assert.Equal(t, data[310:], rest)

	// Same ETag with If-Range: the server ignored Range, nothing changed.
	same, err := c.Range(ctx, srv.URL+"/f", 990, 5, `"v1"`)
	require.NoError(t, err)
	assert.False(t, same.Partial)
	assert.Equal(t, data[990:], readAll(t, same))

	past, err := c.Range(ctx, srv.URL+"/f", 1200, 5, "")
	require.NoError(t, err)
	assert.Empty(t, readAll(t, past))
	assert.Equal(t, int64(1000), past.Total)
}

func TestRangeIfRangeChanged(t *testing.T) {
	srv, _ := newServer(t, serveBytes(`"v2"`, testContent(1000)))
	c := newTestClient(t, fastOptions(), srv)

	rb, err := c.Range(testContext(t), srv.URL+"/f", 10, 10, `"v1"`)
	assert.Nil(t, rb)
	require.ErrorIs(t, err, ErrChanged)
	assert.Contains(t, err.Error(), srv.URL+"/f")
	assert.Contains(t, err.Error(), `"v2"`)
}

func TestRangeEmptyTail416(t *testing.T) {
	srv, rec := newServer(t, serveBytes(`"v1"`, testContent(1000)))
	c := newTestClient(t, fastOptions(), srv)

	rb, err := c.Range(testContext(t), srv.URL+"/f", 1000, 10, `"v1"`)
	require.NoError(t, err)
	assert.Empty(t, readAll(t, rb))
	assert.Equal(t, int64(1000), rb.Total)
	assert.Equal(t, int64(1), rec.count.Load())
}

func TestRange416InsideIsAnError(t *testing.T) {
	srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Range", "bytes */1000")
		w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
	}))
	c := newTestClient(t, fastOptions(), srv)

	_, err := c.Range(testContext(t), srv.URL+"/f", 10, 10, "")
	var se *StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusRequestedRangeNotSatisfiable, se.Code)
}

func TestRangeWrongStartIsAnError(t *testing.T) {
	srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Range", "bytes 0-9/1000")
		w.WriteHeader(http.StatusPartialContent)
		_, _ = w.Write(testContent(10))
	}))
	c := newTestClient(t, fastOptions(), srv)

	_, err := c.Range(testContext(t), srv.URL+"/f", 10, 10, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "starts at 0, asked 10")
}

func TestRangeRetriedAfterResetRestartsAtOffset(t *testing.T) {
	data := testContent(1000)
	var calls atomic.Int64
	srv, rec := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			hijackClose(t, w, true)
			return
		}
		serveBytes(`"v1"`, data)(w, r)
	}))
	c := newTestClient(t, fastOptions(), srv)

	rb, err := c.Range(testContext(t), srv.URL+"/f", 200, 100, "")
	require.NoError(t, err)
	assert.Equal(t, data[200:300], readAll(t, rb))
	require.GreaterOrEqual(t, rec.count.Load(), int64(2))
	last := int(rec.count.Load()) - 1
	assert.Equal(t, "bytes=200-299", rec.header(last).Get("Range"))
}

// breakMidBody answers the first request with the start of a 206 and then
// resets the connection; later requests are served properly.
func breakMidBody(t *testing.T, data []byte, etag string, sent int) http.HandlerFunc {
	var calls atomic.Int64
	return func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) > 1 {
			serveBytes(etag, data)(w, r)
			return
		}
		var first, last int
		_, err := fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &first, &last)
		require.NoError(t, err)
		conn, buf, err := http.NewResponseController(w).Hijack()
		require.NoError(t, err)
		defer conn.Close()
		writeRaw(buf, first, last, len(data), etag)
		_, _ = buf.Write(data[first : first+sent])
		_ = buf.Flush()
		hijackCloseConn(conn)
	}
}

func writeRaw(buf *bufio.ReadWriter, first, last, total int, etag string) {
	fmt.Fprintf(buf, "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes %d-%d/%d\r\n", first, last, total)
	fmt.Fprintf(buf, "Content-Length: %d\r\nETag: %s\r\n\r\n", last-first+1, etag)
}

func TestRangeBodyResumesAtNextByte(t *testing.T) {
	data := testContent(4000)
	srv, rec := newServer(t, breakMidBody(t, data, `"v1"`, 700))
	c := newTestClient(t, fastOptions(), srv)

	rb, err := c.Range(testContext(t), srv.URL+"/f", 1000, 2000, "")
	require.NoError(t, err)
	assert.Equal(t, data[1000:3000], readAll(t, rb))
	require.Equal(t, int64(2), rec.count.Load())
	assert.Equal(t, "bytes=1700-2999", rec.header(1).Get("Range"))
	assert.Equal(t, `"v1"`, rec.header(1).Get("If-Range"))
	assert.Equal(t, int64(1), c.Stats().Retries)
}

func TestRangeBodyResumeSeesChange(t *testing.T) {
	data := testContent(4000)
	var calls atomic.Int64
	broken := breakMidBody(t, data, `"v1"`, 700)
	srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			broken(w, r)
			return
		}
		serveBytes(`"v2"`, data)(w, r)
	}))
	c := newTestClient(t, fastOptions(), srv)

	rb, err := c.Range(testContext(t), srv.URL+"/f", 1000, 2000, "")
	require.NoError(t, err)
	defer rb.Close()
	got, err := io.ReadAll(rb)
	assert.Len(t, got, 700)
	assert.ErrorIs(t, err, ErrChanged)
}
