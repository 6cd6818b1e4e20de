package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/catalog"
	"rsfs/fetch"
	"rsfs/resourcesync"
)

// A Capability List names a Resource List that reads and a Resource Dump
// that answers 404: the load reads the list, keeps the dump as unread (with
// its error) and RetryUnread finds it readable once it is.
func TestUnreadableDumpLeftOutAndRetried(t *testing.T) {
	pages := map[string]page{
		"/caps.xml": {body: `<?xml version="1.0" encoding="UTF-8"?>
<urlset ` + nsXML + `>
  <rs:md capability="capabilitylist"/>
  <url><loc>{base}/rl.xml</loc><rs:md capability="resourcelist"/></url>
  <url><loc>{base}/rd.xml</loc><rs:md capability="resourcedump"/></url>
</urlset>`},
		"/rl.xml": {body: resList},
	}
	base := site(t, pages)
	s, cat, _, err := load(t, base+"caps.xml")
	require.NoError(t, err)
	assert.Equal(t, 1, cat.Len())
	unread := s.UnreadDumps(s.Sets()[0])
	require.Len(t, unread, 1)
	assert.ErrorContains(t, unread[base+"rd.xml"].Err, "404")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	assert.False(t, retry(ctx, s), "still 404")
	pages["/rd.xml"] = page{body: `<?xml version="1.0" encoding="UTF-8"?>
<urlset ` + nsXML + `>
  <rs:md capability="resourcedump" at="2024-01-02T03:04:05Z"/>
</urlset>`}
	assert.True(t, retry(ctx, s), "it reads now")
	_, err = s.LoadEach(ctx, func(*catalog.Resource) error { return nil })
	require.NoError(t, err)
	assert.Empty(t, s.UnreadDumps(s.Sets()[0]), "the reload read it")
}

// A Source whose only documents are dumps, none of which reads, has
// nothing to mount: the load fails, naming why.
func TestNoReadableDumpAndNoListFailsTheLoad(t *testing.T) {
	base := site(t, map[string]page{
		"/caps.xml": {body: `<?xml version="1.0" encoding="UTF-8"?>
<urlset ` + nsXML + `>
  <rs:md capability="capabilitylist"/>
  <url><loc>{base}/rd.xml</loc><rs:md capability="resourcedump"/></url>
</urlset>`},
		"/rd.xml": {status: http.StatusGone},
	})
	_, _, _, err := load(t, base+"caps.xml")
	require.Error(t, err)
	assert.ErrorContains(t, err, "no dump that names a package could be read")
	assert.ErrorContains(t, err, "410")
}

// retry is RetryUnread with the Source's own readers: whether a reload is
// due.
func retry(ctx context.Context, s *Source) bool {
	reload, _ := s.RetryUnread(ctx, false, nil)
	return reload
}

// The registry keeps one entry per URL and kind: a failure noted twice
// keeps the time of the first, a document that reads at a retry is
// forgotten (a Capability List) and one that fails again keeps its latest
// error; the status's view shows a Change Dump both the load and a poll
// could not read once, as the poll found it.
func TestUnreadRegistry(t *testing.T) {
	s := newSource("http://source.example", fetch.ReasonSource, testOptions())
	a := &Set{URL: "http://source.example/a/caps.xml"}
	b := &Set{URL: "http://source.example/b/caps.xml"}
	s.sets = []*Set{a, b}
	t0 := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

	s.noteUnreadCapabilityList(b, errors.New("HTTP 503"))
	first, _ := s.UnreadCapabilityList(b)
	s.noteUnreadCapabilityList(b, errors.New("HTTP 502"))
	d, unread := s.UnreadCapabilityList(b)
	require.True(t, unread)
	assert.Equal(t, first.Since, d.Since, "unread since the first failure")
	assert.EqualError(t, d.Err, "HTTP 502", "the latest error")

	s.NoteChangeDocuments(a, t0, map[string]error{"http://source.example/a/cd.xml": errors.New("poll: 500")})
	s.unread.note("http://source.example/a/cd.xml", UnreadChangeDump, a, errors.New("load: 404"), t0.Add(-time.Hour))
	view := s.Unread(a)
	require.Len(t, view, 1, "one entry per URL in the view")
	assert.Equal(t, UnreadChangeDocument, view[0].Kind)
	assert.EqualError(t, view[0].Err, "poll: 500")
	assert.Len(t, s.Unread(b), 1)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fail := true
	var asked []string
	read := map[UnreadKind]Reread{
		UnreadCapabilityList: func(_ context.Context, set *Set, u string) (bool, error) {
			asked = append(asked, u)
			assert.Same(t, b, set)
			if fail {
				return false, errors.New("HTTP 504")
			}
			return true, nil
		},
		UnreadChangeDump: func(context.Context, *Set, string) (bool, error) { return false, errors.New("still 404") },
	}
	reload, why := s.RetryUnread(ctx, false, read)
	assert.False(t, reload)
	assert.Empty(t, why)
	d, unread = s.UnreadCapabilityList(b)
	require.True(t, unread, "a failed retry keeps it")
	assert.EqualError(t, d.Err, "HTTP 504")
	assert.Equal(t, first.Since, d.Since)

	fail = false
	reload, why = s.RetryUnread(ctx, false, read)
	assert.True(t, reload)
	assert.Equal(t, UnreadCapabilityList, why)
	_, unread = s.UnreadCapabilityList(b)
	assert.False(t, unread, "a retry that reads forgets it")
	assert.Empty(t, s.Unread(b))
	assert.Equal(t, []string{b.URL, b.URL}, asked, "only the Capability List was asked for, once a retry")

	s.NoteChangeDocuments(a, t0, nil)
	require.Len(t, s.Unread(a), 1, "a poll that reads every document forgets its own only")
	assert.Equal(t, UnreadChangeDump, s.Unread(a)[0].Kind)
}

// A state saves the registry (but a poll's change documents) in one list,
// and a Source restored from it shows the same documents, of the same
// kinds, since the same times.
func TestUnreadSavedAndRestored(t *testing.T) {
	s := newSource("http://source.example", fetch.ReasonSource, testOptions())
	a := &Set{URL: "http://source.example/a/caps.xml", Docs: map[resourcesync.Capability][]string{
		resourcesync.CapResourceList: {"http://source.example/a/rl.xml"},
		resourcesync.CapChangeDump:   {"http://source.example/a/cd.xml"},
	}}
	b := &Set{URL: "http://source.example/b/caps.xml"}
	s.sets = []*Set{a, b}
	t0 := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	s.unread.note(b.URL, UnreadCapabilityList, b, errors.New("HTTP 404"), t0)
	s.unread.note("http://source.example/a/rl2.xml", UnreadResourceList, a, errors.New("broken"), t0.Add(time.Second))
	s.noteUnreadDumps(map[string]unreadDoc{"http://source.example/a/cd.xml": {a, UnreadDoc{errors.New("HTTP 410"), t0.Add(2 * time.Second)}}})
	s.NoteChangeDocuments(a, t0, map[string]error{"http://source.example/a/cl.xml": errors.New("HTTP 500")})

	data, err := json.Marshal(s.State(json.RawMessage(`{}`)))
	require.NoError(t, err)
	assert.NotContains(t, string(data), "unread_", "the older maps are not written")
	assert.NotContains(t, string(data), "cl.xml", "a poll's change documents are not saved")
	st, err := DecodeState(data)
	require.NoError(t, err)
	r := Restore(st, testOptions())
	strip := func(us []Unread) []string {
		var out []string
		for _, u := range us {
			out = append(out, fmt.Sprintf("%s %s %s %s", u.URL, u.Kind, u.Err, u.Since.UTC().Format(time.RFC3339)))
		}
		return out
	}
	assert.Equal(t, []string{
		"http://source.example/a/cd.xml change dump HTTP 410 2024-01-02T03:04:07Z",
		"http://source.example/a/rl2.xml resource list broken 2024-01-02T03:04:06Z",
	}, strip(r.Unread(r.Sets()[0])))
	assert.Equal(t, []string{"http://source.example/b/caps.xml capability list HTTP 404 2024-01-02T03:04:05Z"},
		strip(r.Unread(r.Sets()[1])))
}

// A state saved before the one registry (testdata/state-unread-v1.json,
// written by that code: its unread_dumps, unread_capability_lists and
// unread_lists maps) still loads: a Source restored from it shows every
// document it kept, of the right kind and since the saved time, and saves
// them again in the one list.
func TestUnreadOlderStateLoads(t *testing.T) {
	data, err := os.ReadFile("testdata/state-unread-v1.json")
	require.NoError(t, err)
	st, err := DecodeState(data)
	require.NoError(t, err)
	r := Restore(st, testOptions())
	require.Len(t, r.Sets(), 2)
	var got []string
	for _, set := range r.Sets() {
		for _, u := range r.Unread(set) {
			got = append(got, fmt.Sprintf("%s: %s %s since %s", r.SetKey(set), u.Kind, u.URL, u.Since.UTC().Format(time.RFC3339Nano)))
		}
	}
	assert.Equal(t, []string{
		"http://source.example/a/caps.xml: resource dump http://source.example/a/rd.xml since 2026-11-29T05:26:19.820885616Z",
		"http://source.example/a/caps.xml: resource list http://source.example/a/rl2.xml since 2026-11-29T05:26:19.822017118Z",
		"http://source.example/b/caps.xml: capability list http://source.example/b/caps.xml since 2026-11-29T05:26:19.820335814Z",
	}, got)
	d, unread := r.UnreadCapabilityList(r.Sets()[1])
	require.True(t, unread)
	assert.ErrorContains(t, d.Err, "HTTP 404")
	assert.Len(t, r.UnreadDumps(r.Sets()[0]), 1)
	assert.Len(t, r.UnreadLists(r.Sets()[0]), 1)
	again := r.State(st.Positions)
	assert.Len(t, again.Unread, 3)
	assert.Nil(t, again.UnreadDumps)
}
