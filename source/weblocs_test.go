package source

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
	"rsfs/tests/logbuf"
)

// A followed Change List leaves them out too: changes.TestFollowedNonWebLocsAreLeftOut.
func TestNonWebLocsAreLeftOutWithOneWarningPerDocument(t *testing.T) {
	var base string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/caps.xml":
			fmt.Fprintf(w, `<urlset %s><rs:md capability="capabilitylist"/>
<url><loc>%s/rl.xml</loc><rs:md capability="resourcelist"/></url></urlset>`, nsXML, base)
		case "/rl.xml":
			fmt.Fprintf(w, `<urlset %s><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>
<url><loc>%s/a.txt</loc><rs:md length="1"/></url>
<url><loc>file:///etc/passwd</loc><rs:md length="1"/></url>
<url><loc>javascript:alert(1)</loc><rs:md length="1"/></url>
<url><loc>gopher://127.0.0.1:70/x</loc><rs:md length="1"/></url></urlset>`, nsXML, base)
		default:
			w.Write([]byte("x"))
		}
	}))
	t.Cleanup(srv.Close)
	base = srv.URL
	var logs logbuf.Buffer
	opts := testOptions()
	opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Discover(ctx, base+"/caps.xml", opts)
	require.NoError(t, err)
	cat := catalog.New(catalog.Options{Origin: s.Origin})
	_, err = s.Load(ctx, cat, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{base + "/a.txt"}, cat.URIs(), "only the http resource is in the tree")
	assert.Equal(t, 1, strings.Count(logs.String(), "not an http or https URI"), logs.String())
	assert.Contains(t, logs.String(), "document="+base+"/rl.xml entries=3 example=file:///etc/passwd")
}
