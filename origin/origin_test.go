package origin

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOf(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"http://example.org", "http://example.org"},
		{"http://example.org:80/", "http://example.org"},
		{"HTTP://Example.ORG/a/b?q=1#f", "http://example.org"},
		{"https://example.org:443/", "https://example.org"},
		{"https://example.org:80/", "https://example.org:80"},
		{"http://example.org:443/", "http://example.org:443"},
		{"https://example.org:8443/x", "https://example.org:8443"},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"http://[::1]/x", "http://[::1]"},
		{"http://[::1]:80/x", "http://[::1]"},
		{"http://[::1]:8080", "http://[::1]:8080"},
		{"http://[FE80::1]:8080", "http://[fe80::1]:8080"},
		{"https://user:pw@Example.org/rs", "https://example.org"},
		{"ftp://example.org:21/pub", "ftp://example.org"},
		{"wss://example.org:443", "wss://example.org"},
		{"gopher://example.org:70/", "gopher://example.org:70"},
		{"http://example.org:/x", "http://example.org"},
	} {
		got, err := Of(tt.in)
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
}

func TestOfRejects(t *testing.T) {
	for _, bad := range []string{"/relative/path", "example.org", "http://", "http://:80/", "::not a url", "http://bad host/", "mailto:a@example.org"} {
		_, err := Of(bad)
		assert.Error(t, err, bad)
	}
}

func TestFromAuthority(t *testing.T) {
	for _, tt := range []struct{ scheme, authority, origin, hostPort string }{
		{"http", "Example.org", "http://example.org", "example.org"},
		{"HTTP", "example.org:80", "http://example.org", "example.org"},
		{"https", "u:p@example.org:8443", "https://example.org:8443", "example.org:8443"},
		{"http", "[::1]", "http://[::1]", "[::1]"},
		{"http", "[::1]:8080", "http://[::1]:8080", "[::1]:8080"},
		{"file", "", "file://", ""},
	} {
		o, hp := FromAuthority(tt.scheme, tt.authority)
		assert.Equal(t, tt.origin, o, tt.scheme+"://"+tt.authority)
		assert.Equal(t, tt.hostPort, hp, tt.scheme+"://"+tt.authority)
	}
}

func TestStripUserinfo(t *testing.T) {
	for in, want := range map[string]string{
		"http://u:p@h/x":        "http://h/x",
		"https://u@h:8443":      "https://h:8443",
		"http://a@b@h/?q=@":     "http://h/?q=@",
		"http://h/a@b":          "http://h/a@b",
		"/rel@x":                "/rel@x",
		"mailto:a@b":            "mailto:a@b",
		"http://h?x=//u@v":      "http://h?x=//u@v",
		"HTTP://user:pw@[::1]/": "HTTP://[::1]/",
	} {
		got, _, _ := StripUserinfo(in)
		assert.Equal(t, want, got, in)
	}
}

// FuzzOf: on every URL the plain path takes, it gives what url.Parse's
// does. Mutations seen caught: a host byte of '_' or '@' let through, a
// '%' after the authority let through, an empty port let through, an upper-case
// host returned as it stands.
func FuzzOf(f *testing.F) {
	for _, s := range []string{
		"http://example.org/a/b", "https://Example.ORG:8443/x?q=1#f", "http://h:80", "http://h:/x",
		"http://h%41/", "http://h/%zz", "http://h/a b", "http://h/\x7f", "http://u@h/", "http://[::1]/",
		"http://h_1/", "https://h:99999999999999999999/", "http://h?x", "http://h#f", "http://-/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		fast, ok := plainOrigin(raw)
		if !ok {
			return
		}
		slow, err := parsedOrigin(raw)
		if err != nil {
			t.Fatalf("plain path took %q, which url.Parse refuses: %v", raw, err)
		}
		if fast != slow {
			t.Fatalf("origin of %q: plain path %q, url.Parse %q", raw, fast, slow)
		}
	})
}

func TestOfPlainPathTaken(t *testing.T) {
	for _, raw := range []string{"http://example.org/a/b.txt", "https://Data.Example.org:8443/rs/x?q=1#f", "http://127.0.0.1:36087/data/0001/f.txt"} {
		_, ok := plainOrigin(raw)
		assert.True(t, ok, raw)
	}
	for _, raw := range []string{"http://h%41/", "http://h/%20", "http://u@h/", "http://[::1]/", "HTTP://h/", "http://h:/x", "http://h/\x01"} {
		_, ok := plainOrigin(raw)
		assert.False(t, ok, raw)
	}
}

func BenchmarkOf(b *testing.B) {
	for _, raw := range []string{"http://127.0.0.1:36087/data/0001/file-00001.txt", "http://u@127.0.0.1:36087/data/%41"} {
		b.Run(raw[:10], func(b *testing.B) {
			for b.Loop() {
				if _, err := Of(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
