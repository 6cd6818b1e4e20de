package atompmh

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
)

func parseFile(t *testing.T, name, docURL string) *Feed {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	feed, err := Parse(f, docURL, Options{})
	if err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	return feed
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func TestSubscriptionDocumentHead(t *testing.T) {
	f := parseFile(t, "example1-subscription.xml", "http://example.org/feed/archived")
	if f.ID != "urn:uuid:3ce05531-b9c0-4a7d-8966-4d9a9a3a0695" || f.Title != "Example 1" {
		t.Errorf("id, title = %q, %q", f.ID, f.Title)
	}
	if !f.Updated.Equal(utc("2012-11-01T14:00:00Z")) {
		t.Errorf("updated = %v", f.Updated)
	}
	if f.Current != "http://example.org/feed/archived" || f.PrevArchive != "http://example.org/archived/2012/10/31" {
		t.Errorf("current, prev-archive = %q, %q", f.Current, f.PrevArchive)
	}
	if f.NextArchive != "" || f.Self != "" || f.Complete || f.Archive {
		t.Errorf("unexpected head: %+v", f)
	}
	if len(f.Entries) != 1 || len(f.Warnings) != 0 {
		t.Fatalf("entries %d, warnings %v", len(f.Entries), f.Warnings)
	}
	e := f.Entries[0]
	want := Link{Href: "http://example.org/entry/0001", Type: "application/atom+xml", Length: NoLength}
	if e.ID != "urn:uuid:177d5415-c443-410f-a5b6-44bf8433594f" || e.Title != "Alpha data collection" ||
		!e.Updated.Equal(utc("2012-11-01T07:00:00Z")) || e.Kind != KindActive || len(e.Links) != 1 || e.Links[0] != want {
		t.Errorf("entry = %+v", e)
	}
	if e.Line != 8 {
		t.Errorf("entry line = %d, want 8", e.Line)
	}
}

func TestArchiveDocumentHead(t *testing.T) {
	f := parseFile(t, "example1-archive3.xml", "http://example.org/archived/2011/12/31")
	if !f.Archive || f.Complete || f.PrevArchive != "" || f.NextArchive != "http://example.org/archived/2012/06/30" ||
		f.Self != "http://example.org/feed/archived/2011/12/31" {
		t.Errorf("head = %+v", f)
	}
}

func TestCompleteFeedWithSeveralRepresentations(t *testing.T) {
	f := parseFile(t, "example3-complete.xml", "http://example.org/feed/complete/")
	if !f.Complete || len(f.Entries) != 4 {
		t.Fatalf("complete %v, %d entries", f.Complete, len(f.Entries))
	}
	// A link without rel is alternate.
	if l := f.Entries[1].Links; len(l) != 1 || l[0].Href != "http://example.org/entry/0002" {
		t.Errorf("beta links = %+v", l)
	}
	var types []string
	for _, l := range f.Entries[3].Links {
		types = append(types, l.Type)
	}
	if got := strings.Join(types, " "); got != "application/atom+xml application/rifcs+xml application/rdf+xml application/xhtml+xml" {
		t.Errorf("delta types = %s", got)
	}
}

func TestDeletionAndHistoricalEntries(t *testing.T) {
	f := parseFile(t, "example-updates-deletes.xml", "http://example.org/feed")
	var kinds []string
	for _, e := range f.Entries {
		kinds = append(kinds, e.Kind.String())
	}
	if got := strings.Join(kinds, " "); got != "deletion active active active" {
		t.Errorf("kinds = %s", got)
	}
	if d := f.Entries[0]; !d.HasContent || !d.ContentEmpty || len(d.Links) != 0 {
		t.Errorf("deletion entry = %+v", d)
	}
}

const head = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:fh="http://purl.org/syndication/history/1.0">
<id>urn:x</id><updated>2020-01-01T00:00:00Z</updated>
`

func entry(id, updated, body string) string {
	return "<entry><id>" + id + "</id><updated>" + updated + "</updated>" + body + "</entry>\n"
}

func TestHrefResolvedAgainstNestedXMLBase(t *testing.T) {
	doc := `<?xml version="1.0"?>
<feed xmlns="http://www.w3.org/2005/Atom" xml:base="/repo/">
<id>f</id><updated>2020-01-01T00:00:00Z</updated>
<link rel="prev-archive" href="archive/2"/>
<entry xml:base="records/a/"><id>a</id><updated>2020-01-01T00:00:00Z</updated>
<link href="../b/x.xml" type="text/xml"/>
<link href="y.rdf" xml:base="sub/"/>
<link href="//other.example/z"/>
<link href="https://abs.example/q?x=1#f"/>
</entry>
<entry><id>b</id><updated>2020-01-01T00:00:00Z</updated><link href="r.xml"/></entry>
</feed>`
	f, err := Parse(strings.NewReader(doc), "http://h.example/feeds/current.atom", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if f.PrevArchive != "http://h.example/repo/archive/2" {
		t.Errorf("prev-archive = %q", f.PrevArchive)
	}
	want := []string{
		"http://h.example/repo/records/b/x.xml",
		"http://h.example/repo/records/a/sub/y.rdf",
		"http://other.example/z",
		"https://abs.example/q?x=1#f",
	}
	for i, l := range f.Entries[0].Links {
		if i >= len(want) || l.Href != want[i] {
			t.Errorf("link %d = %q, want %q", i, l.Href, want[i])
		}
	}
	if len(f.Entries[0].Links) != len(want) {
		t.Errorf("%d links", len(f.Entries[0].Links))
	}
	if h := f.Entries[1].Links[0].Href; h != "http://h.example/repo/r.xml" {
		t.Errorf("second entry link = %q (the first entry's base must not leak)", h)
	}
}

func TestEntriesWithoutIDOrUpdatedAreSkippedWithAWarning(t *testing.T) {
	doc := head +
		entry("a", "2020-01-01T00:00:00Z", `<link href="a"/>`) +
		"<entry><updated>2020-01-01T00:00:00Z</updated><link href=\"noid\"/></entry>\n" +
		"<entry><id>c</id><link href=\"c\"/></entry>\n" +
		entry("d", "yesterday", `<link href="d"/>`) +
		entry("e", "2020-01-01T00:00:00Z", `<link href="e"/>`) +
		"</feed>"
	f, err := Parse(strings.NewReader(doc), "http://h/feed", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Entries) != 2 || f.Entries[0].ID != "a" || f.Entries[1].ID != "e" {
		t.Fatalf("entries = %+v", f.Entries)
	}
	want := []string{
		"http://h/feed:5:1: entry without atom:id; skipped",
		`http://h/feed:6:1: entry "c" without atom:updated; skipped`,
		`http://h/feed:7:1: entry "d": atom:updated not an RFC 3339 date-time: "yesterday"; skipped`,
	}
	if len(f.Warnings) != len(want) {
		t.Fatalf("warnings = %v", f.Warnings)
	}
	for i, w := range f.Warnings {
		if w.String() != want[i] {
			t.Errorf("warning %d = %q, want %q", i, w, want[i])
		}
	}
}

func TestTimes(t *testing.T) {
	cases := []struct{ in, want string }{
		{"2012-11-01T14:00:00Z", "2012-11-01T14:00:00Z"},
		{"2012-11-01t14:00:00z", "2012-11-01T14:00:00Z"},
		{"2012-11-02T00:30:00+10:30", "2012-11-01T14:00:00Z"},
		{"2012-11-01T14:00:00.250-00:00", "2012-11-01T14:00:00.25Z"},
	}
	for _, c := range cases {
		got, err := ParseTime(c.in)
		if err != nil || got.Format(time.RFC3339Nano) != c.want {
			t.Errorf("ParseTime(%q) = %v, %v; want %s", c.in, got, err, c.want)
		}
	}
	got, err := ParseTime("2012-11-01T14:00:00")
	if !errors.Is(err, errNoZone) || got.Format(time.RFC3339) != "2012-11-01T14:00:00Z" {
		t.Errorf("zone-less: %v, %v", got, err)
	}
	for _, bad := range []string{"", "2012-11-01", "2012-13-01T00:00:00Z", "1 Nov 2012"} {
		if _, err := ParseTime(bad); err == nil || errors.Is(err, errNoZone) {
			t.Errorf("ParseTime(%q) accepted", bad)
		}
	}
}

func TestZonelessEntryTimeIsKeptWithOneWarning(t *testing.T) {
	doc := head + entry("a", "2020-01-01T10:00:00", `<link href="a"/>`) + entry("b", "2020-01-01T11:00:00", `<link href="b"/>`) + "</feed>"
	f, err := Parse(strings.NewReader(doc), "http://h/feed", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Entries) != 2 || f.Entries[0].Updated.Format(time.RFC3339) != "2020-01-01T10:00:00Z" {
		t.Fatalf("entries = %+v", f.Entries)
	}
	if len(f.Warnings) != 1 || f.Warnings[0].String() != "http://h/feed:4:18: datetime without time zone; UTC assumed" {
		t.Errorf("warnings = %v", f.Warnings)
	}
}

func TestEntryKinds(t *testing.T) {
	doc := head +
		entry("del-ws", "2020-01-01T00:00:00Z", "<content>  </content>") +
		entry("src", "2020-01-01T00:00:00Z", `<content src="http://x/y"/>`) +
		entry("text", "2020-01-01T00:00:00Z", "<content>hello</content>") +
		entry("xhtml", "2020-01-01T00:00:00Z", `<content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"/></content>`) +
		entry("none", "2020-01-01T00:00:00Z", "") +
		entry("self-only", "2020-01-01T00:00:00Z", `<link rel="self" href="s"/><content/>`) +
		entry("iana", "2020-01-01T00:00:00Z", `<link rel="http://www.iana.org/assignments/relation/alternate" href="i"/>`) +
		entry("nested", "2020-01-01T00:00:00Z", `<source><id>other</id><link href="src-link"/></source><content/>`) +
		"</feed>"
	f, err := Parse(strings.NewReader(doc), "http://h/feed", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range f.Entries {
		got = append(got, e.ID+"="+e.Kind.String())
	}
	want := "del-ws=deletion src=other text=other xhtml=other none=other self-only=deletion iana=active nested=deletion"
	if strings.Join(got, " ") != want {
		t.Errorf("kinds:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}

func TestGzipByMagicBytes(t *testing.T) {
	raw, err := os.ReadFile("testdata/example3-complete.xml")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(raw)
	zw.Close()
	f, err := Parse(&buf, "http://example.org/feed.atom", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Entries) != 4 || !f.Complete {
		t.Errorf("%d entries, complete %v", len(f.Entries), f.Complete)
	}
}

func TestRefusedDocuments(t *testing.T) {
	cases := []struct {
		name, doc string
		opts      Options
		cause     error
		pos       string // "line:col" in the message
	}{
		{"not xml", "hello", Options{}, ErrNotXML, ":1:"},
		{"empty", "", Options{}, ErrNotXML, ":1:"},
		{"truncated", head + entry("a", "2020-01-01T00:00:00Z", "") + "<entry><id>", Options{}, ErrNotXML, ":5:"},
		{"mismatched tag", head + "<entry></feed>", Options{}, ErrNotXML, ":4:"},
		{"doctype with entity", `<?xml version="1.0"?>
<!DOCTYPE feed [<!ENTITY boom "xxxxxxxxxx">]>
<feed xmlns="http://www.w3.org/2005/Atom"><title>&boom;</title></feed>`, Options{}, ErrNotXML, ":2:1"},
		{"undefined entity", head + "<title>&nbsp;</title></feed>", Options{}, ErrNotXML, ":4:"},
		{"latin-1", `<?xml version="1.0" encoding="ISO-8859-1"?><feed xmlns="http://www.w3.org/2005/Atom"/>`, Options{}, ErrNotXML, ":1:"},
		{"bad utf-8", head + "<title>\xff\xfe</title></feed>", Options{}, ErrNotXML, ":4:"},
		{"second root", head + "</feed><feed/>", Options{}, ErrNotXML, ":4:8"},
		{"text after root", head + "</feed>junk", Options{}, ErrNotXML, ":4:8"},
		{"entry document", `<entry xmlns="http://www.w3.org/2005/Atom"/>`, Options{}, ErrStructure, ":1:1"},
		{"rss", `<rss version="2.0"><channel/></rss>`, Options{}, ErrStructure, ":1:1"},
		{"feed without namespace", `<feed><entry/></feed>`, Options{}, ErrNamespace, ":1:1"},
		{"too large", head + strings.Repeat(entry("a", "2020-01-01T00:00:00Z", "<content/>"), 100) + "</feed>", Options{MaxBytes: 1000}, ErrTooLarge, ""},
		{"token too large", head + `<entry><id>` + strings.Repeat("x", 5000) + "</id></entry></feed>", Options{MaxTokenBytes: 1024}, ErrTooLarge, ":4:12"},
		{"too deep", head + strings.Repeat("<x>", 50) + strings.Repeat("</x>", 50) + "</feed>", Options{MaxDepth: 20}, ErrTooLarge, ":4:"},
		{"too many entries", head + strings.Repeat(entry("a", "2020-01-01T00:00:00Z", "<content/>"), 4) + "</feed>", Options{MaxEntries: 3}, ErrTooManyEntries, ":7:1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(c.doc), "http://h/doc.atom", c.opts)
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, c.cause) {
				t.Fatalf("err = %v, want a ParseError for %v", err, c.cause)
			}
			if !strings.HasPrefix(err.Error(), "http://h/doc.atom:") || !strings.Contains(err.Error(), c.pos) {
				t.Errorf("error %q does not name the document and position %q", err, c.pos)
			}
		})
	}
}

// endless yields an endless attribute value after a feed start tag and
// counts what was read.
type endless struct{ n int }

func (e *endless) Read(p []byte) (int, error) {
	if e.n == 0 {
		e.n = copy(p, `<feed xmlns="http://www.w3.org/2005/Atom"><link href="`)
		return e.n, nil
	}
	for i := range p {
		p[i] = 'a'
	}
	e.n += len(p)
	return len(p), nil
}

func TestOversizedTokenRefusedEarly(t *testing.T) {
	src := &endless{}
	_, err := Parse(src, "http://h/doc.atom", Options{MaxTokenBytes: 64 << 10})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v", err)
	}
	// The token limit stops the read within one buffer of it, long before
	// the 64 MiB document limit.
	if src.n > 64<<10+64<<10 {
		t.Errorf("read %d bytes before refusing a 64 KiB token", src.n)
	}
}

func TestReaderStreamsAndStopsAtError(t *testing.T) {
	doc := head + entry("a", "2020-01-01T00:00:00Z", `<link href="a"/>`) + entry("b", "2020-01-01T00:00:00Z", `<link href="b"/>`) + "<entry><id>c</id></feed>"
	r, err := NewReader(strings.NewReader(doc), "http://h/feed", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			t.Fatal("EOF at a broken document")
		}
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != 6 {
				t.Errorf("err = %v", err)
			}
			if _, err2 := r.Next(); err2 != err {
				t.Errorf("error not sticky: %v", err2)
			}
			break
		}
		ids = append(ids, e.ID)
	}
	if strings.Join(ids, ",") != "a,b" {
		t.Errorf("entries before the error = %v", ids)
	}
}

func TestFeedWithoutEntries(t *testing.T) {
	// Found by FuzzParse: the head ran to the end of the root and Header
	// returned a bare io.EOF.
	f, err := Parse(strings.NewReader(head+"<fh:complete/></feed>\n<!-- end -->\n"), "http://h/feed", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Entries) != 0 || !f.Complete || f.ID != "urn:x" {
		t.Errorf("feed = %+v", f)
	}
}

func TestHeadAfterEntriesIsAppliedWithAWarning(t *testing.T) {
	doc := head + entry("a", "2020-01-01T00:00:00Z", `<link href="a"/>`) +
		`<os:totalResults xmlns:os="http://a9.com/-/spec/opensearch/1.1/">1</os:totalResults>` + "\n" +
		`<link rel="prev-archive" href="/archive/1"/>` + "\n" +
		entry("b", "2020-01-01T00:00:00Z", `<link href="b"/>`) + "</feed>"
	f, err := Parse(strings.NewReader(doc), "http://h/feed", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if f.PrevArchive != "http://h/archive/1" || len(f.Entries) != 2 {
		t.Errorf("prev-archive %q, %d entries", f.PrevArchive, len(f.Entries))
	}
	if len(f.Warnings) != 1 || f.Warnings[0].String() != "http://h/feed:6:1: feed metadata after the first entry (link); applied" {
		t.Errorf("warnings = %v", f.Warnings)
	}
}
