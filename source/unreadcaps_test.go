package source

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
)

// twoSetsDescription is a Source Description as 1.1 §6 (example 2) writes
// one, naming three Capability Lists.
const twoSetsDescription = `<?xml version="1.0" encoding="UTF-8"?>
<urlset ` + nsXML + `>
  <rs:md capability="description"/>
  <url><loc>{base}/a/caps.xml</loc><rs:md capability="capabilitylist"/></url>
  <url><loc>{base}/b/caps.xml</loc><rs:md capability="capabilitylist"/></url>
  <url><loc>{base}/c/caps.xml</loc><rs:md capability="capabilitylist"/></url>
</urlset>`

// setCaps is a Capability List (1.1 §7, example 3) of set x, naming its
// Resource List.
func setCaps(x string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<urlset ` + nsXML + `>
  <rs:ln rel="up" href="{base}/.well-known/resourcesync"/>
  <rs:md capability="capabilitylist"/>
  <url><loc>{base}/` + x + `/rl.xml</loc><rs:md capability="resourcelist"/></url>
</urlset>`
}

// setList is set x's Resource List, of one resource.
func setList(x string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<urlset ` + nsXML + `>
  <rs:md capability="resourcelist" at="2024-01-02T03:04:05Z"/>
  <url><loc>{base}/` + x + `/file.txt</loc><rs:md length="3"/></url>
</urlset>`
}

func threeSets() map[string]page {
	return map[string]page{
		"/.well-known/resourcesync": {body: twoSetsDescription},
		"/a/caps.xml":               {body: setCaps("a")},
		"/a/rl.xml":                 {body: setList("a")},
		"/b/caps.xml":               {status: http.StatusNotFound},
		"/b/rl.xml":                 {body: setList("b")},
		"/c/caps.xml":               {body: `<?xml version="1.0"?><urlset ` + nsXML + `><rs:md capability="capabilitylist"/><url><loc>`},
		"/c/rl.xml":                 {body: setList("c")},
	}
}

func setByURL(t *testing.T, s *Source, u string) *Set {
	t.Helper()
	for _, set := range s.Sets() {
		if set.URL == u {
			return set
		}
	}
	require.Failf(t, "no set", "no set of %s", u)
	return nil
}

// A Source Description names three Capability Lists, one that reads, one
// that answers 404, one malformed: the Source loads from the one that
// reads, and the others are sets with no documents, each noted unread
// with its error.
func TestUnreadCapabilityListLeftOut(t *testing.T) {
	base := site(t, threeSets())
	s, cat, _, err := load(t, base)
	require.NoError(t, err)
	assert.Equal(t, []string{base + "a/file.txt"}, cat.URIs())
	require.Len(t, s.Sets(), 3)
	for _, tc := range []struct{ set, err string }{{"b", "404"}, {"c", "XML"}} {
		set := setByURL(t, s, base+tc.set+"/caps.xml")
		d, unread := s.UnreadCapabilityList(set)
		require.True(t, unread, tc.set)
		assert.ErrorContains(t, d.Err, "read capability list "+base+tc.set+"/caps.xml")
		assert.ErrorContains(t, d.Err, tc.err)
		assert.False(t, d.Since.IsZero())
		assert.Empty(t, s.AllDocs(set))
	}
	_, unread := s.UnreadCapabilityList(setByURL(t, s, base+"a/caps.xml"))
	assert.False(t, unread)

	st := s.State(json.RawMessage(`{}`))
	require.Len(t, st.Unread, 2)
	assert.Equal(t, base+"b/caps.xml", st.Unread[0].URL)
	assert.Equal(t, UnreadCapabilityList, st.Unread[0].Kind)
	assert.Contains(t, st.Unread[0].Error, "404")
	r := Restore(st, testOptions())
	_, unread = r.UnreadCapabilityList(r.Sets()[1])
	assert.True(t, unread, "a Source restored from the state still shows it unread")
}

// When no Capability List the Source Description names can be read,
// there is nothing to mount: discovery fails, naming each one and why.
func TestNoCapabilityListReadableFails(t *testing.T) {
	pages := threeSets()
	pages["/a/caps.xml"] = page{status: http.StatusGone}
	base := site(t, pages)
	_, err := discover(t, base)
	require.Error(t, err)
	for _, want := range []string{base + "a/caps.xml", "410", base + "b/caps.xml", "404", base + "c/caps.xml"} {
		assert.ErrorContains(t, err, want)
	}
}

// A Source found again while a Capability List that was read before
// fails keeps that set's documents as a saved state had them (and the
// time it has failed since), so its Resource List is still read: nothing
// the set held is dropped because its Capability List cannot be read.
func TestKeepSavedSetsWhileTheCapabilityListFails(t *testing.T) {
	pages := threeSets()
	pages["/b/caps.xml"] = page{body: setCaps("b")}
	base := site(t, pages)
	before, _, _, err := load(t, base)
	require.NoError(t, err)
	st := before.State(json.RawMessage(`{}`))
	since := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	st.Unread = append(st.Unread, SavedUnreadDoc{URL: base + "c/caps.xml", Kind: UnreadCapabilityList, Set: base + "c/caps.xml", Error: "old", Since: since})

	pages["/b/caps.xml"] = page{status: http.StatusServiceUnavailable}
	s, err := discover(t, base)
	require.NoError(t, err)
	s.KeepSavedSets(st)
	assert.True(t, s.SameSets(st), "the sets are as saved")
	c, _ := s.UnreadCapabilityList(setByURL(t, s, base+"c/caps.xml"))
	assert.Equal(t, since, c.Since, "unread since the saved time")
	b, unread := s.UnreadCapabilityList(setByURL(t, s, base+"b/caps.xml"))
	require.True(t, unread)
	assert.ErrorContains(t, b.Err, "503")

	cat := catalog.New(catalog.Options{Origin: s.Origin})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = s.Load(ctx, cat, nil)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{base + "a/file.txt", base + "b/file.txt"}, cat.URIs(),
		"b's Resource List is read from where the saved set says")
}
