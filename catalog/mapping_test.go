package catalog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testOrigin = "http://src.example"

func TestMapURIRules(t *testing.T) {
	long := strings.Repeat("x", 300)
	// printf 'x%.0s' $(seq 300) | sha256sum | cut -c1-10
	longCut := strings.Repeat("x", 244) + "~0d4e2ca9e9"
	tests := []struct {
		rule, uri, want string
	}{
		{"1 origin root", "http://src.example/a/b", "a/b"},
		{"1 origin case and default port", "HTTP://Src.Example:80/a", "a"},
		{"1 other host with port", "http://localhost:8080/x", "@localhost:8080/x"},
		{"1 other host default port", "https://Mirror.example:443/y", "@mirror.example/y"},
		{"1 other scheme same host", "https://src.example/a", "@src.example/a"},
		{"1 user info dropped", "http://user:pw@src.example/a", "a"},
		{"1 no authority", "urn:isbn:123", "@urn:/isbn:123"},
		{"2 dot segments", "http://src.example/a/./b/../c", "a/c"},
		{"2 dot segments above root", "http://src.example/../../a", "a"},
		{"2 trailing dot-dot", "http://src.example/a/b/..", "a/_index"},
		{"2 trailing dot", "http://src.example/a/b/.", "a/b/_index"},
		{"2 empty segments", "http://src.example/a//b", "a/b"},
		{"2 space decoded", "http://src.example/my%20file.txt", "my file.txt"},
		{"2 slash kept encoded", "http://src.example/a%2fb", "a%2Fb"},
		{"2 NUL kept encoded", "http://src.example/a%00b", "a%00b"},
		{"2 percent kept encoded", "http://src.example/100%25", "100%25"},
		{"2 newline and CR kept encoded", "http://src.example/a%0Ab%0d.txt", "a%0Ab%0D.txt"},
		{"2 every control kept encoded", "http://src.example/%01%09%1F%7F%20", "%01%09%1F%7F "},
		{"2 raw control escaped", "http://src.example/d\tx/a\nb\x7f", "d%09x/a%0Ab%7F"},
		{"2 control in a directory", "http://src.example/a%0A/b", "a%0A/b"},
		{"2 encoded dot-dot", "http://src.example/%2E%2E/x", "%2E%2E/x"},
		{"2 encoded dot", "http://src.example/%2e", "%2E"},
		{"2 invalid escape", "http://src.example/a%zz%4", "a%zz%4"},
		{"2 utf-8 decoded", "http://src.example/caf%C3%A9", "café"},
		{"2 invalid utf-8 kept", "http://src.example/a%FFb", "a\xffb"},
		{"3 query kept", "http://src.example/q.cgi?id=1", "q.cgi?id=1"},
		{"3 query not decoded", "http://src.example/q?a=%20", "q?a=%20"},
		{"3 slash in query", "http://src.example/q?p=a/b#top", "q?p=a%2Fb"},
		{"3 raw control in query", "http://src.example/q?p=a\nb\r", "q?p=a%0Ab%0D"},
		{"3 fragment dropped", "http://src.example/a#frag", "a"},
		{"4 trailing slash", "http://src.example/docs/", "docs/_index"},
		{"4 origin root", "http://src.example/", "_index"},
		{"4 origin without path", "http://src.example", "_index"},
		{"4 query on index", "http://src.example/docs/?page=2", "docs/_index?page=2"},
		{"6 long name", "http://src.example/d/" + long, "d/" + longCut},
		{"6 long directory", "http://src.example/" + long + "/f", longCut + "/f"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			assert.Equal(t, tt.want, strings.Join(MapURI(testOrigin, tt.uri), "/"))
		})
	}
}

func TestLongNameCutsAtUTF8Boundary(t *testing.T) {
	name := strings.Repeat("é", 150) // 300 bytes, 2 per rune
	got := fitName(name)
	// printf 'é%.0s' $(seq 150) | sha256sum | cut -c1-10
	assert.Equal(t, strings.Repeat("é", 122)+"~cb1fa31581", got)
	assert.LessOrEqual(t, len(got), NameMax)
}

// A catalog's origin and its URIs' origins are compared in one canonical
// form: however either is spelled, the Source's own resources map to the
// top level and others under @host[:port].
func TestOriginSpellings(t *testing.T) {
	for _, tt := range []struct{ origin, uri, want string }{
		{"HTTP://SRC.example:80", "http://src.example/a", "a"},
		{"http://src.example", "HTTP://Src.Example:80/a", "a"},
		{"https://src.example:8443/some/path", "https://SRC.example:8443/a", "a"},
		{"http://[::1]:8080", "http://[::1]:8080/a", "a"},
		{"http://src.example", "http://src.example:8080/a", "@src.example:8080/a"},
		{"http://src.example", "https://src.example/a", "@src.example/a"},
		{"http://src.example", "http://u:p@Mirror.example:80/a", "@mirror.example/a"},
	} {
		c := New(Options{Origin: tt.origin})
		c.Add(&Resource{URI: tt.uri, Length: 1})
		c.Seal()
		id, ok := c.ByURI(tt.uri)
		require.True(t, ok, tt.uri)
		assert.Equal(t, tt.want, c.Path(id), tt.origin+" "+tt.uri)
	}
}

func TestSplitURI(t *testing.T) {
	for uri, want := range map[string][2]string{
		"http://h/a/b.txt":     {"http://h/a/", "b.txt"},
		"http://h/a/?q=1/2":    {"http://h/a/", "?q=1/2"},
		"http://h":             {"http://h", ""},
		"http://h?x":           {"http://h", "?x"},
		"http://h/q?p=a/b#c/d": {"http://h/", "q?p=a/b#c/d"},
		"urn:isbn:1":           {"urn:", "isbn:1"},
	} {
		p, s := splitURI(uri)
		require.Equal(t, want, [2]string{p, s}, uri)
		require.Equal(t, uri, p+s)
	}
}

// Rules 5 and 7 depend on the other resources: they are tested on a sealed
// catalog.
func TestSealFileAndDirCollisions(t *testing.T) {
	c := New(Options{Origin: testOrigin})
	uris := []string{
		"http://src.example/a",          // file and dir: a/_index
		"http://src.example/a/b",        // makes a a directory
		"http://src.example/a/",         // also a/_index: sorts after /a, suffixed
		"http://src.example/aA",         // aA
		"http://src.example/a%41",       // decodes to aA: sorts before /aA, keeps it
		"http://src.example/x/_index/y", // makes x/_index a directory
		"http://src.example/x/",         // so x/ is x/_index/_index
		"http://src.example/a%2F",       // a%2F
		"http://src.example/a%252F",     // a%252F: distinct
	}
	for _, u := range uris {
		c.Add(&Resource{URI: u, Length: 1})
	}
	c.Seal()
	want := map[string]string{
		"http://src.example/a":          "a/_index",
		"http://src.example/a/b":        "a/b",
		"http://src.example/a/":         "a/_index~cbda5e3512", // printf %s http://src.example/a/ | sha256sum | cut -c1-10
		"http://src.example/aA":         "aA~f98806df5e",       // printf %s http://src.example/aA | sha256sum | cut -c1-10
		"http://src.example/a%41":       "aA",
		"http://src.example/x/_index/y": "x/_index/y",
		"http://src.example/x/":         "x/_index/_index",
		"http://src.example/a%2F":       "a%2F",
		"http://src.example/a%252F":     "a%252F",
	}
	for u, p := range want {
		id, ok := c.ByURI(u)
		require.True(t, ok, u)
		assert.Equal(t, p, c.Path(id), u)
	}
	assert.Equal(t, 2, c.Stats().Renamed)
}

func TestCollisionSuffixOnLongName(t *testing.T) {
	long := strings.Repeat("y", 255)
	c := New(Options{Origin: testOrigin})
	u1 := "http://src.example/" + long
	u2 := "http://src.example/" + strings.Repeat("y", 254) + "%79" // same decoded name, sorts first ('%' < 'y')
	c.Add(&Resource{URI: u2})
	c.Add(&Resource{URI: u1})
	c.Seal()
	id1, _ := c.ByURI(u1)
	id2, _ := c.ByURI(u2)
	assert.Equal(t, long, c.Path(id2))
	// printf 'http://src.example/%s' $(printf 'y%.0s' $(seq 255)) | sha256sum | cut -c1-10
	assert.Equal(t, strings.Repeat("y", 244)+"~4178d1c539", c.Path(id1))
}
