package e2e

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestControlCharactersAndUserinfo: a <loc> with %0A, %0D or %09 maps to a
// name that holds the escape, not the character, so `find -print` gives
// one line per file; a <loc> with user:secret@ is fetched without an
// Authorization header, and the secret is in no log line.
func TestControlCharactersAndUserinfo(t *testing.T) {
	t.Parallel()
	needFUSE(t)
	root := t.TempDir()
	var mu sync.Mutex
	var auth []string
	files := http.FileServer(http.Dir(root))
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		files.ServeHTTP(w, r)
	}))
	host := srv.Listener.Addr().String()
	base := "http://" + host + "/"
	writeStaticSource(t, root, base, []staticFile{
		{loc: base + "d/a%0Ab.txt", path: "d/a\nb.txt", body: []byte("newline\n")},
		{loc: base + "d/c%0Dd%09e.txt", path: "d/c\rd\te.txt", body: []byte("cr and tab\n")},
		{loc: base + "d/plain.txt", path: "d/plain.txt", body: []byte("plain\n")},
		{loc: "http://user:secret@" + host + "/x", path: "x", body: []byte("no credentials\n")},
	})
	srv.Start()
	t.Cleanup(srv.Close)

	m := mount(t, base)
	out, _, err := run(t, 30*time.Second, "find", m.dir, "-type", "f", "-print")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	assert.ElementsMatch(t, []string{m.path("d/a%0Ab.txt"), m.path("d/c%0Dd%09e.txt"), m.path("d/plain.txt"), m.path("x")}, lines, "one line per file:\n%s", out)
	for rel, want := range map[string]string{"d/a%0Ab.txt": "newline\n", "d/c%0Dd%09e.txt": "cr and tab\n", "x": "no credentials\n"} {
		b, err := os.ReadFile(m.path(rel))
		require.NoError(t, err, rel)
		assert.Equal(t, want, string(b), rel)
	}
	uri, _, err := run(t, 10*time.Second, "getfattr", "--only-values", "-n", "user.resourcesync.uri", m.path("x"))
	require.NoError(t, err)
	assert.Equal(t, base+"x", uri, "the URI without its userinfo")

	mu.Lock()
	for _, a := range auth {
		assert.Empty(t, a, "no Authorization header")
	}
	assert.NotEmpty(t, auth)
	mu.Unlock()
	m.unmount(t)
	log, err := os.ReadFile(m.logFile)
	require.NoError(t, err)
	assert.NotContains(t, string(log), "secret")
	assert.Contains(t, string(log), "userinfo removed")
}
