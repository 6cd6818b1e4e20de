package fetch

import (
	"bufio"
	"bytes"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// written is what a server reads of req written by write.
func written(t testing.TB, req *http.Request, write func(*bufio.Writer, *http.Request) error) (*http.Request, []byte) {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	require.NoError(t, write(w, req))
	require.NoError(t, w.Flush())
	raw := bytes.Clone(b.Bytes())
	got, err := http.ReadRequest(bufio.NewReader(&b))
	require.NoError(t, err, "%q", raw)
	assert.Zero(t, b.Len(), "one request, nothing after it: %q", raw)
	return got, raw
}

func requestWrite(w *bufio.Writer, req *http.Request) error { return req.Write(w) }

func TestWriteRequestMeansWhatRequestWriteMeans(t *testing.T) {
	for _, tc := range []struct {
		name   string
		url    string
		header http.Header
		plain  bool
	}{
		{"a content GET", "http://h.example:8080/data/f%20one.txt?x=1&y=%2F", http.Header{"User-Agent": {"rsfs/1"}}, true},
		{"credentials and validators", "http://h/a", http.Header{"User-Agent": {"rsfs/1"}, "Authorization": {"Bearer t0k3n"},
			"If-None-Match": {`"abc"`, `W/"def"`}, "X-Api-Key": {"k"}}, true},
		{"no user agent", "http://h/a", http.Header{}, true},
		{"an empty user agent", "http://h/a", http.Header{"User-Agent": {""}}, false},
		{"two user agents", "http://h/a", http.Header{"User-Agent": {"a", "b"}}, false},
		{"a value with a line break", "http://h/a", http.Header{"X-A": {"one\r\nX-Evil: 1"}}, false},
		{"a value with edge blanks", "http://h/a", http.Header{"X-A": {" v "}}, false},
		{"a non-ASCII value", "http://h/a", http.Header{"X-A": {"é"}}, false},
		{"a Host field", "http://h/a", http.Header{"Host": {"other"}}, false},
		{"a Connection field", "http://h/a", http.Header{"Connection": {"close"}}, false},
		{"a bad field name", "http://h/a", http.Header{"X A": {"v"}}, false},
		{"an IPv6 zone", "http://[fe80::1%25eth0]:80/a", http.Header{}, false},
		{"a non-ASCII host", "http://bücher.example/a", http.Header{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, tc.url, nil)
			require.NoError(t, err)
			req.Header = tc.header
			host := req.URL.Host
			assert.Equal(t, tc.plain, plainGET(req, host, req.URL.RequestURI()), "written directly")
			want, _ := written(t, req, requestWrite)
			got, raw := written(t, req, writeRequest)
			assert.Equal(t, want.Method, got.Method, "%q", raw)
			assert.Equal(t, want.RequestURI, got.RequestURI, "%q", raw)
			assert.Equal(t, want.Host, got.Host, "%q", raw)
			assert.Equal(t, want.Header, got.Header, "%q", raw)
			assert.Equal(t, want.Proto, got.Proto, "%q", raw)
		})
	}
	// Not GETs, or with a body, or to close: Request.Write's.
	for _, mk := range []func() *http.Request{
		func() *http.Request { r, _ := http.NewRequest(http.MethodHead, "http://h/a", nil); return r },
		func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, "http://h/a", bytes.NewReader([]byte("x")))
			return r
		},
		func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, "http://h/a", nil)
			r.Close = true
			return r
		},
	} {
		req := mk()
		assert.False(t, plainGET(req, req.URL.Host, req.URL.RequestURI()))
	}
}

func FuzzWriteRequest(f *testing.F) {
	f.Add("/a/b.txt?q=1", "X-Key", "v a l")
	f.Add("/%20", "If-None-Match", `"e"`)
	f.Fuzz(func(t *testing.T, path, key, value string) {
		req, err := http.NewRequest(http.MethodGet, "http://h.example"+path, nil)
		if err != nil || req.URL.Host != "h.example" {
			return
		}
		req.Header = http.Header{"User-Agent": {"rsfs/1"}, key: {value}}
		var wb, gb bytes.Buffer
		ww, gw := bufio.NewWriter(&wb), bufio.NewWriter(&gb)
		werr, gerr := req.Write(ww), writeRequest(gw, req)
		_, _ = ww.Flush(), gw.Flush()
		if werr != nil {
			return // Request.Write refuses it: so does writeRequest (it falls back)
		}
		require.NoError(t, gerr)
		want, werr := http.ReadRequest(bufio.NewReader(&wb))
		got, gerr := http.ReadRequest(bufio.NewReader(&gb))
		if werr != nil {
			return
		}
		require.NoError(t, gerr, "%q", gb.String())
		assert.Equal(t, want.RequestURI, got.RequestURI)
		assert.Equal(t, want.Host, got.Host)
		assert.Equal(t, want.Header, got.Header)
	})
}
