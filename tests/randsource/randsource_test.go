package randsource

import (
	"archive/zip"
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The Source checked against the standard's rules, as a destination reads
// it over HTTP: so that a convergence failure is rsfs's, not the Source's.

type xmlDoc struct {
	XMLName  xml.Name
	MD       xmlMD    `xml:"md"`
	Links    []xmlLn  `xml:"ln"`
	URLs     []xmlURL `xml:"url"`
	Sitemaps []xmlURL `xml:"sitemap"`
}

type xmlMD struct {
	Capability string `xml:"capability,attr"`
	From       string `xml:"from,attr"`
	Until      string `xml:"until,attr"`
	At         string `xml:"at,attr"`
	Change     string `xml:"change,attr"`
	Datetime   string `xml:"datetime,attr"`
	Hash       string `xml:"hash,attr"`
	Length     string `xml:"length,attr"`
	Path       string `xml:"path,attr"`
}

type xmlLn struct {
	Rel  string `xml:"rel,attr"`
	Href string `xml:"href,attr"`
}

type xmlURL struct {
	Loc     string `xml:"loc"`
	Lastmod string `xml:"lastmod"`
	MD      xmlMD  `xml:"md"`
}

func get(t *testing.T, url string) (int, []byte, http.Header) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body, resp.Header
}

func parse(t *testing.T, body []byte, what string) xmlDoc {
	t.Helper()
	var d xmlDoc
	if err := xml.Unmarshal(body, &d); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, body)
	}
	return d
}

func tm(t *testing.T, s, what string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("%s: %q: %v", what, s, err)
	}
	return v
}

// dated is a change as a destination reads it.
type dated struct {
	at            time.Time
	kind, loc     string
	hash, lastmod string
	length        string
}

// readChanges reads a change document's entries and checks them: change
// times (datetime, or lastmod where no entry has one) within from and
// until, in order; a new version's hash and length given.
func readChanges(t *testing.T, d xmlDoc, what string) (from, until time.Time, out []dated) {
	t.Helper()
	from = tm(t, d.MD.From, what+" from")
	if d.MD.Until != "" {
		until = tm(t, d.MD.Until, what+" until")
	}
	byLastmod := true
	for _, u := range d.URLs {
		if u.MD.Datetime != "" {
			byLastmod = false
		}
	}
	var prev time.Time
	for _, u := range d.URLs {
		ts := u.MD.Datetime
		if byLastmod {
			ts = u.Lastmod
		}
		at := tm(t, ts, what+" entry "+u.Loc)
		if at.Before(from) || (!until.IsZero() && at.After(until)) || at.Before(prev) {
			t.Fatalf("%s: %s %s at %s: outside [%s, %s] or before %s", what, u.MD.Change, u.Loc, at, from, until, prev)
		}
		if at.Equal(until) {
			t.Fatalf("%s: %s %s on the boundary %s (no SharedBoundary)", what, u.MD.Change, u.Loc, until)
		}
		if !byLastmod && u.MD.Datetime == "" {
			t.Fatalf("%s: %s undated among dated entries", what, u.Loc)
		}
		prev = at
		if u.MD.Change != "deleted" && (!strings.HasPrefix(u.MD.Hash, "md5:") || u.MD.Length == "" || u.Lastmod == "") {
			t.Fatalf("%s: %s %s without hash, length or lastmod", what, u.MD.Change, u.Loc)
		}
		out = append(out, dated{at: at, kind: u.MD.Change, loc: u.Loc, hash: u.MD.Hash, lastmod: u.Lastmod, length: u.MD.Length})
	}
	return from, until, out
}

type state map[string]dated // by loc: hash, lastmod, length

func (st state) apply(cs []dated) {
	for _, c := range cs {
		if c.kind == "deleted" {
			delete(st, c.loc)
		} else {
			st[c.loc] = c
		}
	}
}

func TestSourceFollowsTheStandard(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkSeed(t, seed) })
	}
}

func checkSeed(t *testing.T, seed int64) {
	s, err := Start(Config{Seed: seed, Files: 1 + int(seed%10), Dating: Dating(seed % 3), Index: seed%2 == 0})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 0; i < 60; i++ {
		s.RandomOp()
	}
	base := strings.TrimSuffix(s.URL(), "/")

	_, body, _ := get(t, base+wellKnown)
	desc := parse(t, body, "description")
	if desc.MD.Capability != "description" || len(desc.URLs) != 1 {
		t.Fatalf("description: %s", body)
	}
	_, body, _ = get(t, desc.URLs[0].Loc)
	capl := parse(t, body, "capability list")
	named := map[string]string{}
	for _, u := range capl.URLs {
		named[u.MD.Capability] = u.Loc
	}
	if capl.MD.Capability != "capabilitylist" || named["resourcelist"] == "" || named["changelist"] == "" {
		t.Fatalf("capability list: %s", body)
	}

	// The Resource List.
	_, body, _ = get(t, named["resourcelist"])
	rl := parse(t, body, "resource list")
	at := tm(t, rl.MD.At, "resource list at")
	listed := state{}
	for _, u := range rl.URLs {
		listed[u.Loc] = dated{loc: u.Loc, hash: u.MD.Hash, lastmod: u.Lastmod, length: u.MD.Length}
	}

	// The Change Lists the Capability List names (through the index).
	_, body, _ = get(t, named["changelist"])
	cl := parse(t, body, "change list (or index)")
	var lists []string
	if cl.XMLName.Local == "sitemapindex" {
		var prevUntil time.Time
		for i, sm := range cl.Sitemaps {
			from := tm(t, sm.MD.From, "index child from")
			if i == 0 && sm.MD.From != cl.MD.From {
				t.Fatalf("index from %s, first child from %s", cl.MD.From, sm.MD.From)
			}
			if i > 0 && !from.Equal(prevUntil) {
				t.Fatalf("index child %s from %s, the one before until %s", sm.Loc, from, prevUntil)
			}
			if (sm.MD.Until == "") != (i == len(cl.Sitemaps)-1) {
				t.Fatalf("index: only the last child is open: %s", body)
			}
			if sm.MD.Until != "" {
				prevUntil = tm(t, sm.MD.Until, "index child until")
			}
			lists = append(lists, sm.Loc)
		}
	} else {
		lists = []string{named["changelist"]}
	}
	var named2 []dated
	var firstFrom time.Time
	for i, u := range lists {
		code, body, _ := get(t, u)
		if code != http.StatusOK {
			t.Fatalf("%s: %d", u, code)
		}
		from, until, cs := readChanges(t, parse(t, body, u), u)
		if i == 0 {
			firstFrom = from
		}
		if (i == len(lists)-1) != until.IsZero() {
			t.Fatalf("%s: only the open list lacks until", u)
		}
		named2 = append(named2, cs...)
	}
	// A destination starting from the Resource List and the named lists
	// reaches the truth: the lists reach back to the Resource List.
	if firstFrom.After(at) {
		t.Fatalf("the named Change Lists start at %s, after the Resource List's at %s", firstFrom, at)
	}
	var after []dated
	for _, c := range named2 {
		if c.at.After(at) {
			after = append(after, c)
		}
	}
	listed.apply(after)
	truth := s.Truth()
	if len(listed) != len(truth) {
		t.Fatalf("Resource List + Change Lists: %d resources, truth %d", len(listed), len(truth))
	}
	for p, f := range truth {
		h := md5.Sum(f.Body)
		got, ok := listed[base+p]
		if !ok || got.hash != "md5:"+hex.EncodeToString(h[:]) || got.lastmod != w3c(f.Lastmod) || got.length != fmt.Sprint(len(f.Body)) {
			t.Fatalf("%s: Resource List + Change Lists say %+v, truth %d bytes lastmod %s", p, got, len(f.Body), w3c(f.Lastmod))
		}
	}

	// Every list ever published: none removed before the Resource List
	// covered it; no two changes to one resource at one instant; the
	// whole history replayed from the start is the truth.
	s.mu.Lock()
	nLists := len(s.lists)
	s.mu.Unlock()
	seen := map[string]bool{}
	var prevAt time.Time
	for n := 1; n <= nLists; n++ {
		s.mu.Lock()
		l := *s.lists[n-1]
		var body []byte
		if !l.removed {
			body = s.changeList(&l)
		} else {
			l.removed = false
			body = s.changeList(&l)
		}
		s.mu.Unlock()
		if s.lists[n-1].removed {
			if code, _, _ := get(t, base+listPath(n)); code != http.StatusNotFound {
				t.Fatalf("removed list %d answers %d", n, code)
			}
			if l.until.After(at) {
				t.Fatalf("list %d removed, until %s, after the Resource List at %s", n, l.until, at)
			}
		}
		_, _, cs := readChanges(t, parse(t, body, listPath(n)), listPath(n))
		for _, c := range cs {
			k := c.loc + " " + c.at.String()
			if seen[k] {
				t.Fatalf("two changes to %s at %s", c.loc, c.at)
			}
			seen[k] = true
			if c.at.Before(prevAt) {
				t.Fatalf("list %d: %s at %s before an earlier list's %s", n, c.loc, c.at, prevAt)
			}
			prevAt = c.at
		}
	}

	// Change Dump packages: contiguous, manifests dated within them, each
	// member the version its entry describes.
	if loc := named["changedump"]; loc != "" {
		_, body, _ = get(t, loc)
		cd := parse(t, body, "change dump")
		var prevUntil time.Time
		for i, u := range cd.URLs {
			from, until := tm(t, u.MD.From, "package from"), tm(t, u.MD.Until, "package until")
			if i > 0 && !from.Equal(prevUntil) {
				t.Fatalf("package %s from %s, the one before until %s", u.Loc, from, prevUntil)
			}
			prevUntil = until
			code, pb, _ := get(t, u.Loc)
			if code != http.StatusOK || fmt.Sprint(len(pb)) != u.MD.Length {
				t.Fatalf("package %s: %d, %d bytes, listed %s", u.Loc, code, len(pb), u.MD.Length)
			}
			zr, err := zip.NewReader(bytes.NewReader(pb), int64(len(pb)))
			if err != nil {
				t.Fatal(err)
			}
			members := map[string][]byte{}
			for _, f := range zr.File {
				rc, err := f.Open()
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(rc)
				rc.Close()
				members["/"+f.Name] = b
			}
			man := parse(t, members["/manifest.xml"], u.Loc+" manifest")
			if man.MD.Capability != "changedump-manifest" || man.MD.From != u.MD.From || man.MD.Until != u.MD.Until {
				t.Fatalf("%s manifest header %+v", u.Loc, man.MD)
			}
			readChanges(t, man, u.Loc+" manifest")
			for _, e := range man.URLs {
				if e.MD.Change == "deleted" {
					continue
				}
				m, ok := members[e.MD.Path]
				h := md5.Sum(m)
				if !ok || "md5:"+hex.EncodeToString(h[:]) != e.MD.Hash || fmt.Sprint(len(m)) != e.MD.Length {
					t.Fatalf("%s: member %s of %s does not match its entry", u.Loc, e.MD.Path, e.Loc)
				}
			}
		}
	}

	// Resources: ETag, conditional GET, Range.
	for p, f := range truth {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		etag := resp.Header.Get("ETag")
		req, _ := http.NewRequest(http.MethodGet, base+p, nil)
		req.Header.Set("If-None-Match", etag)
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotModified {
			t.Fatalf("%s: conditional GET %d", p, resp.StatusCode)
		}
		if len(f.Body) > 10 {
			req, _ = http.NewRequest(http.MethodGet, base+p, nil)
			req.Header.Set("Range", "bytes=3-9")
			resp, err = http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(b, f.Body[3:10]) {
				t.Fatalf("%s: Range %d %q", p, resp.StatusCode, b)
			}
		}
		break
	}
	// Documents: a conditional GET of an unchanged one is 304.
	resp, err := http.Get(named["resourcelist"])
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	req, _ := http.NewRequest(http.MethodGet, named["resourcelist"], nil)
	req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
	req.Header.Set("If-Modified-Since", resp.Header.Get("Last-Modified"))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotModified {
		t.Fatalf("resource list: conditional GET %d", resp.StatusCode)
	}
}

// The publishers' ways (Config's UndatedDeletions, NewestFirst, NoChange,
// OnlyFrom) as a destination reads them: a deletion with neither datetime
// nor lastmod, entries without change, a header with from alone (the
// first change's time, or the epoch while there is none), entries newest
// first.
func TestPublishersWaysAreWritten(t *testing.T) {
	changeList := func(s *Source) xmlDoc {
		_, body, _ := get(t, strings.TrimSuffix(s.URL(), "/")+listPath(s.open().n))
		return parse(t, body, "change list")
	}
	s, err := Start(Config{Seed: 1, Files: 2, UndatedDeletions: true, NoChange: true, OnlyFrom: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if d := changeList(s); d.MD.From != "1970-01-01T00:00:00Z" || d.MD.Until != "" {
		t.Fatalf("an empty list's header: from %q until %q", d.MD.From, d.MD.Until)
	}
	for i := 0; i < 8; i++ {
		if _, err := s.Create(fmt.Sprintf("/r/q%d.txt", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Delete("/r/q0.txt"); err != nil {
		t.Fatal(err)
	}
	s.Rotate()
	_, body, _ := get(t, strings.TrimSuffix(s.URL(), "/")+listPath(1))
	d := parse(t, body, "closed change list")
	if d.MD.Until != "" || d.MD.From != d.URLs[0].MD.Datetime {
		t.Fatalf("only from: from %q until %q, first change %q", d.MD.From, d.MD.Until, d.URLs[0].MD.Datetime)
	}
	said, unsaid := 0, 0
	for _, u := range d.URLs[:8] {
		if u.MD.Change == "" {
			unsaid++
		} else {
			said++
		}
	}
	if said == 0 || unsaid == 0 {
		t.Fatalf("entries with change %d, without %d: want some of each", said, unsaid)
	}
	if del := d.URLs[8]; del.Loc != s.base+"/r/q0.txt" || del.MD.Datetime != "" || del.Lastmod != "" {
		t.Fatalf("the deletion is dated: %+v", del)
	}

	s2, err := Start(Config{Seed: 1, Files: 2, NewestFirst: true, UndatedDeletions: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	for i := 0; i < 3; i++ {
		if _, err := s2.Create(fmt.Sprintf("/r/n%d.txt", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s2.Delete("/r/n0.txt"); err != nil {
		t.Fatal(err)
	}
	d = changeList(s2)
	var locs []string
	for _, u := range d.URLs {
		locs = append(locs, strings.TrimPrefix(u.Loc, s2.base))
		if u.MD.Datetime == "" {
			t.Fatalf("newest first, yet an undated entry: %+v", u)
		}
	}
	if strings.Join(locs, " ") != "/r/n0.txt /r/n2.txt /r/n1.txt /r/n0.txt" {
		t.Fatalf("entries not newest first: %v", locs)
	}
}

// The Resource Dump quirks as a destination reads them: a dump-only Source
// names a Resource Dump and no Resource List; per-item dumps are a package
// per resource, each linking its manifest by rel="contents", the manifest
// naming the member that holds the resource's bytes; Dumps404 names a
// Resource Dump that answers 404.
func TestResourceDumpsAreWritten(t *testing.T) {
	s, err := Start(Config{Seed: 1, Files: 3, DumpOnly: true, PerItemDumps: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base := strings.TrimSuffix(s.URL(), "/")
	_, body, _ := get(t, base+capList)
	named := map[string]string{}
	for _, u := range parse(t, body, "capability list").URLs {
		named[u.MD.Capability] = u.Loc
	}
	if named["resourcelist"] != "" || named["resourcedump"] != base+resDump {
		t.Fatalf("capability list: %s", body)
	}
	if code, _, _ := get(t, base+resList); code != http.StatusNotFound {
		t.Fatalf("the Resource List answers %d", code)
	}
	type dumpURL struct {
		Loc   string  `xml:"loc"`
		Links []xmlLn `xml:"ln"`
	}
	var rd struct {
		URLs []dumpURL `xml:"url"`
	}
	_, body, _ = get(t, base+resDump)
	if err := xml.Unmarshal(body, &rd); err != nil {
		t.Fatal(err)
	}
	truth := s.Truth()
	if len(rd.URLs) != len(truth) {
		t.Fatalf("%d packages for %d resources", len(rd.URLs), len(truth))
	}
	for _, u := range rd.URLs {
		if len(u.Links) != 1 || u.Links[0].Rel != "contents" {
			t.Fatalf("package %s links %+v", u.Loc, u.Links)
		}
		_, mb, _ := get(t, u.Links[0].Href)
		man := parse(t, mb, "manifest")
		if man.MD.Capability != "resourcedump-manifest" || len(man.URLs) != 1 {
			t.Fatalf("manifest: %s", mb)
		}
		_, zb, _ := get(t, u.Loc)
		zr, err := zip.NewReader(bytes.NewReader(zb), int64(len(zb)))
		if err != nil {
			t.Fatal(err)
		}
		f, err := zr.Open(strings.TrimPrefix(man.URLs[0].MD.Path, "/"))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(f)
		if want := truth[strings.TrimPrefix(man.URLs[0].Loc, base)].Body; !bytes.Equal(got, want) {
			t.Fatalf("member %s: %q, want %q", man.URLs[0].MD.Path, got, want)
		}
	}

	s404, err := Start(Config{Seed: 1, Files: 3, Dumps404: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s404.Close()
	base = strings.TrimSuffix(s404.URL(), "/")
	_, body, _ = get(t, base+capList)
	if !strings.Contains(string(body), resDump) || !strings.Contains(string(body), resList) {
		t.Fatalf("capability list: %s", body)
	}
	if code, _, _ := get(t, base+resDump); code != http.StatusNotFound {
		t.Fatalf("the Resource Dump answers %d", code)
	}
}
