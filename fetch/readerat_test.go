package fetch

import (
	"archive/zip"
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReaderAt(t *testing.T) {
	data := testContent(1000)
	srv, rec := newServer(t, serveBytes(`"v1"`, data))
	c := newTestClient(t, fastOptions(), srv)
	ra := NewReaderAt(testContext(t), c, srv.URL+"/f", int64(len(data)), `"v1"`)
	assert.Equal(t, int64(1000), ra.Size())

	p := make([]byte, 100)
	n, err := ra.ReadAt(p, 250)
	require.NoError(t, err)
	assert.Equal(t, 100, n)
	assert.Equal(t, data[250:350], p)

	n, err = ra.ReadAt(p, 950)
	assert.Equal(t, io.EOF, err)
	assert.Equal(t, 50, n)
	assert.Equal(t, data[950:], p[:50])

	n, err = ra.ReadAt(p, 1000)
	assert.Equal(t, io.EOF, err)
	assert.Zero(t, n)

	assert.Equal(t, int64(2), rec.count.Load(), "one request per ReadAt, none past the end")
	assert.Equal(t, "bytes=250-349", rec.header(0).Get("Range"))
	assert.Equal(t, `"v1"`, rec.header(0).Get("If-Range"))
	assert.Equal(t, "bytes=950-999", rec.header(1).Get("Range"))
}

func TestReaderAtChanged(t *testing.T) {
	srv, _ := newServer(t, serveBytes(`"v2"`, testContent(1000)))
	c := newTestClient(t, fastOptions(), srv)
	ra := NewReaderAt(testContext(t), c, srv.URL+"/f", 1000, `"v1"`)

	_, err := ra.ReadAt(make([]byte, 10), 0)
	assert.ErrorIs(t, err, ErrChanged)
}

func TestReaderAtShorterThanClaimed(t *testing.T) {
	srv, _ := newServer(t, serveBytes(`"v1"`, testContent(500)))
	c := newTestClient(t, fastOptions(), srv)
	ra := NewReaderAt(testContext(t), c, srv.URL+"/f", 1000, "")

	_, err := ra.ReadAt(make([]byte, 10), 700)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

func TestReaderAtReadsZip(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	members := map[string][]byte{"a.txt": []byte("alpha\n"), "dir/b.bin": testContent(70000)}
	for name, body := range members {
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, err = w.Write(body)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	srv, _ := newServer(t, serveBytes(`"zip1"`, buf.Bytes()))
	c := newTestClient(t, fastOptions(), srv)

	ra := NewReaderAt(testContext(t), c, srv.URL+"/dump.zip", int64(buf.Len()), `"zip1"`)
	zr, err := zip.NewReader(ra, ra.Size())
	require.NoError(t, err)
	require.Len(t, zr.File, 2)
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		got, err := io.ReadAll(rc)
		require.NoError(t, err, f.Name)
		require.NoError(t, rc.Close())
		assert.Equal(t, members[f.Name], got, f.Name)
	}
	assert.Less(t, c.Stats().BytesRead, int64(2*buf.Len()), "ranges, not whole downloads")
}
