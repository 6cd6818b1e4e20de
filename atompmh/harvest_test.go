package atompmh_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"rsfs/atompmh"
	"rsfs/tests/atomsource"
)

// httpFetch fetches over HTTP with a conditional GET on the URLs it has an
// ETag for, as the fetch layer will.
type httpFetch struct {
	mu    sync.Mutex
	etags map[string]string
}

func (f *httpFetch) fetch(ctx context.Context, url string, conditional bool) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	if f.etags == nil {
		f.etags = make(map[string]string)
	}
	if et := f.etags[url]; et != "" && conditional {
		req.Header.Set("If-None-Match", et)
	}
	f.mu.Unlock()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		f.mu.Lock()
		f.etags[url] = resp.Header.Get("ETag")
		f.mu.Unlock()
		return resp.Body, nil
	case http.StatusNotModified:
		resp.Body.Close()
		return nil, atompmh.ErrNotModified
	}
	resp.Body.Close()
	return nil, fmt.Errorf("HTTP %s", resp.Status)
}

func newHarvester() *atompmh.Harvester {
	return &atompmh.Harvester{Fetch: (&httpFetch{}).fetch}
}

// pool renders a harvested pool as atomsource.Pool does.
func pool(st *atompmh.State) map[string][]string {
	out := make(map[string][]string, len(st.Pool))
	for id, e := range st.Pool {
		var reps []string
		for _, l := range e.Links {
			reps = append(reps, l.Type+" "+l.Href)
		}
		slices.Sort(reps)
		out[id] = reps
	}
	return out
}

func assertPool(t *testing.T, st *atompmh.State, src *atomsource.Source) {
	t.Helper()
	got, want := pool(st), src.Pool()
	if len(got) != len(want) {
		t.Errorf("pool has %d records, the producer %d", len(got), len(want))
	}
	for id, reps := range want {
		if !slices.Equal(got[id], reps) {
			t.Errorf("record %s: harvested %v, producer %v", id, got[id], reps)
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			t.Errorf("record %s harvested, not in the producer's pool", id)
		}
	}
}

func xmlRep(name string) atomsource.Rep {
	return atomsource.Rep{Type: "application/atom+xml", Ext: "atom", Body: []byte("<entry>" + name + "</entry>\n")}
}

func rdfRep(name string) atomsource.Rep {
	return atomsource.Rep{Type: "application/rdf+xml", Ext: "rdf", Body: []byte("<rdf:RDF>" + name + "</rdf:RDF>\n")}
}

func createN(t testing.TB, src *atomsource.Source, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		name := fmt.Sprintf("r%03d", i)
		if err := src.Create(name, "Record "+name, xmlRep(name), rdfRep(name)); err != nil {
			t.Fatal(err)
		}
	}
}

func harvest(t *testing.T, h *atompmh.Harvester, src *atomsource.Source, st *atompmh.State) *atompmh.Result {
	t.Helper()
	res, err := h.Harvest(context.Background(), src.URL(), st)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func changes(res *atompmh.Result) string {
	var s []string
	for _, c := range res.Changes {
		s = append(s, c.Op.String()+" "+strings.TrimPrefix(c.ID, "urn:x-atomsource:"))
	}
	return strings.Join(s, ", ")
}

func TestFirstHarvestWalksTheWholeChain(t *testing.T) {
	src := atomsource.Start(atomsource.Config{PerDocument: 10})
	defer src.Close()
	createN(t, src, 0, 25)
	st := atompmh.NewState()
	res := harvest(t, newHarvester(), src, st)

	want := []string{src.URL(), src.ArchiveURL(2), src.ArchiveURL(1)}
	if !slices.Equal(res.Documents, want) || src.DocumentRequests() != 3 {
		t.Errorf("documents %v (%d requests), want %v", res.Documents, src.DocumentRequests(), want)
	}
	if !res.Whole || len(res.Warnings) != 0 {
		t.Errorf("whole %v, warnings %v", res.Whole, res.Warnings)
	}
	assertPool(t, st, src)
	// The producer's clock: 2024-01-01T00:00Z plus one minute a mutation.
	if got := st.Mark.Format(time.RFC3339); got != "2024-01-01T00:25:00Z" {
		t.Errorf("mark = %s", got)
	}
	if res.Counts != (atompmh.Counts{Active: 25}) || len(res.Changes) != 25 {
		t.Errorf("counts %+v, %d changes", res.Counts, len(res.Changes))
	}
}

func TestHistoricalAndDeletionEntriesAcrossDocuments(t *testing.T) {
	src := atomsource.Start(atomsource.Config{PerDocument: 2})
	defer src.Close()
	createN(t, src, 0, 4)
	// r000 loses its RDF and gains a text form; r001 is deleted; r002 is
	// updated twice (two historical entries).
	txt := atomsource.Rep{Type: "text/plain", Ext: "txt", Body: []byte("r000\n")}
	for _, err := range []error{
		src.Update("r000", "Record r000 (modified)", xmlRep("r000"), txt),
		src.Delete("r001"),
		src.Update("r002", "Record r002 v2", xmlRep("r002")),
		src.Update("r002", "Record r002 v3", rdfRep("r002")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	st := atompmh.NewState()
	res := harvest(t, newHarvester(), src, st)
	assertPool(t, st, src)
	if want := (atompmh.Counts{Active: 3, Historical: 4, Deletion: 1}); res.Counts != want {
		t.Errorf("counts %+v, want %+v", res.Counts, want)
	}
	if got := st.Pool[atomsource.ID("r000")].Title; got != "Record r000 (modified)" {
		t.Errorf("r000 title = %q", got)
	}
}

func TestIncrementalHarvestStopsAtTheFirstDocumentNoNewerThanTheMark(t *testing.T) {
	src := atomsource.Start(atomsource.Config{PerDocument: 10})
	defer src.Close()
	createN(t, src, 0, 30) // the subscription document is full: 10 entries, 2 archives
	h, st := newHarvester(), atompmh.NewState()
	harvest(t, h, src, st)

	// Nothing changed: a 304, one request.
	src.ResetRequests()
	if res := harvest(t, h, src, st); !res.NotModified || src.DocumentRequests() != 1 {
		t.Errorf("unchanged feed: not-modified %v, %d document requests", res.NotModified, src.DocumentRequests())
	}

	// One creation rotates the subscription document into archive 3. The
	// walk reads the new subscription document and archive 3, which is no
	// newer than the mark, and stops.
	createN(t, src, 30, 31)
	src.ResetRequests()
	res := harvest(t, h, src, st)
	if got := fmt.Sprint(src.Requests("/feed"), src.Requests("/archive/3"), src.Requests("/archive/2"), src.Requests("/archive/1")); got != "1 1 0 0" {
		t.Errorf("requests /feed, /archive/3, 2, 1 = %s", got)
	}
	if changes(res) != "create r030" || !res.Whole {
		t.Errorf("changes %q, whole %v", changes(res), res.Whole)
	}

	// Three changes in the new subscription document, returned in the
	// order they were made.
	_ = src.Update("r005", "Record r005 v2", xmlRep("r005"))
	_ = src.Delete("r001")
	createN(t, src, 31, 32)
	src.ResetRequests()
	res = harvest(t, h, src, st)
	if got := changes(res); got != "update r005, delete r001, create r031" {
		t.Errorf("changes = %q", got)
	}
	if src.DocumentRequests() != 2 {
		t.Errorf("%d document requests, want 2", src.DocumentRequests())
	}
	assertPool(t, st, src)
}

func TestBrokenChainOnFirstHarvestKeepsWhatWasReadAndNoMark(t *testing.T) {
	src := atomsource.Start(atomsource.Config{PerDocument: 10})
	defer src.Close()
	createN(t, src, 0, 25)
	src.Fail("/archive/1", http.StatusInternalServerError)
	h, st := newHarvester(), atompmh.NewState()
	res := harvest(t, h, src, st)
	if res.Whole || !st.Mark.IsZero() {
		t.Errorf("whole %v, mark %v after a broken chain", res.Whole, st.Mark)
	}
	if len(st.Pool) != 15 {
		t.Errorf("pool has %d records, want the 15 of the documents read", len(st.Pool))
	}
	if len(res.Warnings) != 1 || !strings.HasPrefix(res.Warnings[0].String(), src.ArchiveURL(2)+": prev-archive: fetching "+src.ArchiveURL(1)+": HTTP 500") ||
		!strings.Contains(res.Warnings[0].Msg, "chain broken, harvest mark kept") {
		t.Errorf("warnings = %v", res.Warnings)
	}
	src.Fail("/archive/1", 0)
	res = harvest(t, h, src, st)
	if !res.Whole || len(res.Changes) != 10 {
		t.Errorf("after healing: whole %v, %d changes", res.Whole, len(res.Changes))
	}
	assertPool(t, st, src)
}

func TestBrokenChainOnIncrementalHarvestKeepsTheMark(t *testing.T) {
	src := atomsource.Start(atomsource.Config{PerDocument: 10})
	defer src.Close()
	createN(t, src, 0, 10)
	h, st := newHarvester(), atompmh.NewState()
	harvest(t, h, src, st)
	mark := st.Mark

	createN(t, src, 10, 35) // archives 2 and 3 and the subscription document are new
	_ = src.Delete("r003")
	src.Fail("/archive/2", http.StatusServiceUnavailable)
	res := harvest(t, h, src, st)
	if res.Whole || !st.Mark.Equal(mark) {
		t.Errorf("whole %v, mark %v (was %v)", res.Whole, st.Mark, mark)
	}
	if len(res.Changes) != 16 { // r020..r034 and the deletion of r003
		t.Errorf("%d changes from the documents read: %s", len(res.Changes), changes(res))
	}
	src.Fail("/archive/2", 0)
	src.ResetRequests()
	res = harvest(t, h, src, st)
	if !res.Whole || changes(res) != "create r010, create r011, create r012, create r013, create r014, create r015, create r016, create r017, create r018, create r019" {
		t.Errorf("after healing: whole %v, changes %s", res.Whole, changes(res))
	}
	// The walk went down to archive 1 again, the last document read whole.
	if src.Requests("/archive/1") != 1 {
		t.Errorf("archive 1 requested %d times", src.Requests("/archive/1"))
	}
	assertPool(t, st, src)
}

func TestCycleInTheChainIsReadOnceAndWarned(t *testing.T) {
	src := atomsource.Start(atomsource.Config{PerDocument: 5})
	defer src.Close()
	createN(t, src, 0, 20) // archives 1..3, the subscription document
	src.SetPrevArchive(1, "/archive/3")
	st := atompmh.NewState()
	res := harvest(t, newHarvester(), src, st)
	for _, p := range []string{"/feed", "/archive/3", "/archive/2", "/archive/1"} {
		if n := src.Requests(p); n != 1 {
			t.Errorf("%s requested %d times", p, n)
		}
	}
	if res.Whole || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].String(), src.ArchiveURL(1)+": prev-archive "+src.ArchiveURL(3)+" was read already in this walk (a cycle)") {
		t.Errorf("whole %v, warnings %v", res.Whole, res.Warnings)
	}
	assertPool(t, st, src)
}

func TestCompleteFeedDeletesWhatIsAbsent(t *testing.T) {
	src := atomsource.Start(atomsource.Config{Complete: true})
	defer src.Close()
	createN(t, src, 0, 4)
	h, st := newHarvester(), atompmh.NewState()
	if res := harvest(t, h, src, st); !res.Complete || len(st.Pool) != 4 {
		t.Fatalf("complete %v, %d records", res.Complete, len(st.Pool))
	}
	_ = src.Delete("r001")
	_ = src.Update("r002", "Record r002 v2", xmlRep("r002"))
	src.ResetRequests()
	res := harvest(t, h, src, st)
	// The deletion has no entry: it takes the document's time, the time of
	// the update after it, and ties are in the order of the ids.
	if got := changes(res); got != "delete r001, update r002" {
		t.Fatalf("changes = %q", got)
	}
	if d := res.Changes[0]; d.Updated.Format(time.RFC3339) != "2024-01-01T00:06:00Z" {
		t.Errorf("deletion time %v", d.Updated)
	}
	if src.DocumentRequests() != 1 {
		t.Errorf("%d document requests", src.DocumentRequests())
	}
	assertPool(t, st, src)
}

func TestSubscriptionDocumentFailureChangesNothing(t *testing.T) {
	src := atomsource.Start(atomsource.Config{PerDocument: 10})
	defer src.Close()
	createN(t, src, 0, 5)
	h, st := newHarvester(), atompmh.NewState()
	harvest(t, h, src, st)
	mark := st.Mark
	_ = src.Delete("r000")
	src.Fail("/feed", http.StatusInternalServerError)
	_, err := h.Harvest(context.Background(), src.URL(), st)
	if err == nil || !strings.Contains(err.Error(), src.URL()) {
		t.Fatalf("err = %v", err)
	}
	if len(st.Pool) != 5 || !st.Mark.Equal(mark) {
		t.Errorf("state changed: %d records, mark %v", len(st.Pool), st.Mark)
	}
}

// docs serves literal documents by URL.
type docs map[string]string

func (d docs) fetch(_ context.Context, url string, _ bool) (io.ReadCloser, error) {
	s, ok := d[url]
	if !ok {
		return nil, errors.New("no such document")
	}
	return io.NopCloser(strings.NewReader(s)), nil
}

const feedHead = `<feed xmlns="http://www.w3.org/2005/Atom"><id>f</id><updated>%s</updated>%s`

func TestTiesDeletionWinsThenTheNewerDocument(t *testing.T) {
	d := docs{
		"http://h/sub": fmt.Sprintf(feedHead, "2024-01-02T00:00:00Z", `<link rel="prev-archive" href="/a1"/>`) +
			`<entry><id>x</id><updated>2024-01-01T12:00:00Z</updated><link href="/x-new"/></entry>
			 <entry><id>y</id><updated>2024-01-01T12:00:00Z</updated><link href="/y"/></entry>
			 <entry><id>y</id><updated>2024-01-01T12:00:00Z</updated><content/></entry></feed>`,
		"http://h/a1": fmt.Sprintf(feedHead, "2024-01-01T12:00:00Z", "") +
			`<entry><id>x</id><updated>2024-01-01T12:00:00Z</updated><link href="/x-old"/></entry></feed>`,
	}
	st := atompmh.NewState()
	res, err := (&atompmh.Harvester{Fetch: d.fetch}).Harvest(context.Background(), "http://h/sub", st)
	if err != nil {
		t.Fatal(err)
	}
	if x := st.Pool["x"]; x == nil || x.Links[0].Href != "http://h/x-new" {
		t.Errorf("x = %+v, want the entry of the newer document", x)
	}
	if _, ok := st.Pool["y"]; ok || len(st.Pool) != 1 {
		t.Errorf("y kept: a deletion of the same time must win")
	}
	if res.Counts != (atompmh.Counts{Active: 1, Historical: 2, Deletion: 1}) {
		t.Errorf("counts %+v", res.Counts)
	}
}

func TestAnOlderEntryReadLaterDoesNotResurrectADeletedRecord(t *testing.T) {
	d := docs{"http://h/sub": fmt.Sprintf(feedHead, "2024-01-01T00:00:00Z", "") +
		`<entry><id>x</id><updated>2024-01-01T00:00:00Z</updated><link href="/x"/></entry></feed>`}
	h, st := &atompmh.Harvester{Fetch: d.fetch}, atompmh.NewState()
	if _, err := h.Harvest(context.Background(), "http://h/sub", st); err != nil {
		t.Fatal(err)
	}
	// The record is deleted; the old subscription document, now an
	// archive no newer than the mark, still holds its active entry.
	d["http://h/a1"] = d["http://h/sub"]
	d["http://h/sub"] = fmt.Sprintf(feedHead, "2024-01-03T00:00:00Z", `<link rel="prev-archive" href="/a1"/>`) +
		`<entry><id>x</id><updated>2024-01-02T00:00:00Z</updated><content/></entry></feed>`
	res, err := h.Harvest(context.Background(), "http://h/sub", st)
	if err != nil {
		t.Fatal(err)
	}
	if changes(res) != "delete x" || len(st.Pool) != 0 {
		t.Fatalf("changes %q, pool %v", changes(res), st.Pool)
	}
	// The producer rewrites that document as it becomes an archive (the
	// specification lets archives change): the deletion entry is gone, the
	// historical active entry is there. It is the document at the mark, read
	// by the next walk; what the state remembers of the deletion keeps x
	// deleted.
	d["http://h/a2"] = fmt.Sprintf(feedHead, "2024-01-03T00:00:00Z", "") +
		`<entry><id>x</id><updated>2024-01-01T00:00:00Z</updated><link href="/x"/></entry></feed>`
	d["http://h/sub"] = fmt.Sprintf(feedHead, "2024-01-04T00:00:00Z", `<link rel="prev-archive" href="/a2"/>`) + `</feed>`
	res, err = h.Harvest(context.Background(), "http://h/sub", st)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 0 || len(st.Pool) != 0 {
		t.Errorf("changes %q, pool %v", changes(res), st.Pool)
	}
}

func TestEveryHarvestedRepresentationServesItsBytes(t *testing.T) {
	src := atomsource.Start(atomsource.Config{PerDocument: 3})
	defer src.Close()
	createN(t, src, 0, 7)
	txt := atomsource.Rep{Type: "text/plain", Ext: "txt", Body: []byte("r004 as text\n")}
	if err := src.Update("r004", "Record r004 v2", rdfRep("r004"), txt); err != nil {
		t.Fatal(err)
	}
	st := atompmh.NewState()
	harvest(t, newHarvester(), src, st)
	want := map[string]string{}
	for i := range 7 {
		name := fmt.Sprintf("r%03d", i)
		want[src.RepURL(name, "atom")] = "<entry>" + name + "</entry>\n"
		want[src.RepURL(name, "rdf")] = "<rdf:RDF>" + name + "</rdf:RDF>\n"
	}
	delete(want, src.RepURL("r004", "atom"))
	want[src.RepURL("r004", "txt")] = "r004 as text\n"
	seen := 0
	for _, e := range st.Pool {
		for _, l := range e.Links {
			resp, err := http.Get(l.Href)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if w, ok := want[l.Href]; !ok || string(b) != w || resp.Header.Get("Content-Type") != l.Type {
				t.Errorf("%s (%s): %q, %s", l.Href, l.Type, b, resp.Header.Get("Content-Type"))
			}
			seen++
		}
	}
	if seen != len(want) {
		t.Errorf("%d representations harvested, want %d", seen, len(want))
	}
}

func TestAChangedArchiveAtTheMarkMakesTheWalkGoOn(t *testing.T) {
	src := atomsource.Start(atomsource.Config{PerDocument: 5})
	defer src.Close()
	createN(t, src, 0, 11) // archives 1 and 2, r010 in the subscription document
	h, st := newHarvester(), atompmh.NewState()
	harvest(t, h, src, st) // archive 2 was read: it is at the mark

	// The producer rewrites archives 1 and 2; then one new record.
	for n, name := range map[int]string{1: "late1", 2: "late2"} {
		if err := src.Backdate(n, name, "Late "+name, xmlRep(name)); err != nil {
			t.Fatal(err)
		}
	}
	createN(t, src, 11, 12)
	src.ResetRequests()
	res := harvest(t, h, src, st)
	if got := changes(res); got != "create late1, create late2, create r011" {
		t.Errorf("changes = %q", got)
	}
	if src.Requests("/archive/1") != 1 {
		t.Errorf("archive 1 requested %d times: the walk did not go on", src.Requests("/archive/1"))
	}
	found := false
	for _, w := range res.Warnings {
		found = found || w.String() == src.ArchiveURL(2)+": archive document changed since the last harvest read it; walking the whole chain"
	}
	if !found || !res.Whole {
		t.Errorf("whole %v, warnings %v", res.Whole, res.Warnings)
	}
	assertPool(t, st, src)
}

func TestCancelledHarvestChangesNothing(t *testing.T) {
	src := atomsource.Start(atomsource.Config{PerDocument: 5})
	defer src.Close()
	createN(t, src, 0, 12)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inner := &httpFetch{}
	fetch := func(ctx context.Context, url string, cond bool) (io.ReadCloser, error) {
		body, err := inner.fetch(ctx, url, cond)
		if strings.HasSuffix(url, "/archive/2") {
			cancel() // while an archive document is read
		}
		return body, err
	}
	st := atompmh.NewState()
	_, err := (&atompmh.Harvester{Fetch: fetch}).Harvest(ctx, src.URL(), st)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if len(st.Pool) != 0 || !st.Mark.IsZero() || st.Broken {
		t.Errorf("state changed: %d records, mark %v, broken %v", len(st.Pool), st.Mark, st.Broken)
	}
}

func TestMaxDocumentsEndsTheWalkLikeABrokenChain(t *testing.T) {
	src := atomsource.Start(atomsource.Config{PerDocument: 2})
	defer src.Close()
	createN(t, src, 0, 9) // 5 documents
	st := atompmh.NewState()
	res, err := (&atompmh.Harvester{Fetch: (&httpFetch{}).fetch, MaxDocuments: 3}).Harvest(context.Background(), src.URL(), st)
	if err != nil {
		t.Fatal(err)
	}
	if res.Whole || !st.Broken || src.DocumentRequests() != 3 || len(st.Pool) != 5 {
		t.Errorf("whole %v, broken %v, %d requests, %d records", res.Whole, st.Broken, src.DocumentRequests(), len(st.Pool))
	}
	if len(res.Warnings) != 1 || res.Warnings[0].String() != src.ArchiveURL(3)+": more than 3 documents in the chain; chain broken, harvest mark kept" {
		t.Errorf("warnings = %v", res.Warnings)
	}
}
