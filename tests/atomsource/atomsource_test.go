package atomsource

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func get(t *testing.T, url, etag string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("ETag"), string(b)
}

func TestRotationDeletionAndConditionalGET(t *testing.T) {
	s := Start(Config{PerDocument: 2})
	defer s.Close()
	rep := Rep{Type: "text/plain", Ext: "txt", Body: []byte("hello\n")}
	for _, n := range []string{"a", "b", "c"} {
		if err := s.Create(n, "Record "+n, rep); err != nil {
			t.Fatal(err)
		}
	}
	if s.Documents() != 2 {
		t.Fatalf("%d documents after 3 entries of 2 a document", s.Documents())
	}
	status, etag, body := get(t, s.URL(), "")
	if status != 200 || !strings.Contains(body, `<link rel="prev-archive" href="`+s.ArchiveURL(1)+`"/>`) ||
		!strings.Contains(body, "<id>urn:x-atomsource:c</id>") || strings.Contains(body, "urn:x-atomsource:a<") {
		t.Fatalf("subscription document:\n%s", body)
	}
	if status, _, _ := get(t, s.URL(), etag); status != http.StatusNotModified {
		t.Errorf("If-None-Match with the current ETag: %d", status)
	}
	_, _, archive := get(t, s.ArchiveURL(1), "")
	if !strings.Contains(archive, `xml:base="/rec/"`) || !strings.Contains(archive, `<updated>2024-01-01T10:02:00+10:00</updated>`) ||
		!strings.Contains(archive, "<fh:archive/>") || strings.Contains(archive, "prev-archive") {
		t.Errorf("oldest archive document:\n%s", archive)
	}
	if err := s.Delete("a"); err != nil {
		t.Fatal(err)
	}
	if status, _, _ := get(t, s.URL(), etag); status != http.StatusOK {
		t.Errorf("after a change the old ETag got %d", status)
	}
	if status, _, _ := get(t, s.RepURL("a", "txt"), ""); status != http.StatusGone {
		t.Errorf("deleted record's representation: %d", status)
	}
	if status, _, b := get(t, s.RepURL("b", "txt"), ""); status != 200 || b != "hello\n" {
		t.Errorf("representation: %d %q", status, b)
	}
	if status, _, _ := get(t, s.RepURL("b", "rdf"), ""); status != http.StatusNotFound {
		t.Errorf("a format the record lacks: %d", status)
	}
	if s.Requests("/feed") != 3 || s.DocumentRequests() != 4 {
		t.Errorf("requests /feed %d, documents %d", s.Requests("/feed"), s.DocumentRequests())
	}
}
