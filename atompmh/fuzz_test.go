package atompmh

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.xml")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(head + entry("a", "2020-01-01T00:00:00", `<link href="../x" xml:base="a/b/"/><content/>`) + "</feed>"))
	f.Add([]byte(`<feed xmlns="http://www.w3.org/2005/Atom" xml:base="http://h/"><link rel="prev-archive" href="p"/><entry><id>x</id></entry></feed>`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		feed, err := Parse(bytes.NewReader(doc), "http://h.example/feed/doc.atom", Options{MaxTokenBytes: 4096, MaxEntries: 1000})
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.URL != "http://h.example/feed/doc.atom" || pe.Line < 1 || pe.Column < 1 {
				t.Fatalf("error without document and position: %#v", err)
			}
			return
		}
		for _, e := range feed.Entries {
			if e.ID == "" {
				t.Fatalf("entry without id kept: %+v", e)
			}
			switch e.Kind {
			case KindActive:
				if len(e.Links) == 0 {
					t.Fatalf("active entry without links: %+v", e)
				}
			case KindDeletion:
				if len(e.Links) != 0 || !e.HasContent || !e.ContentEmpty {
					t.Fatalf("deletion entry with links or content: %+v", e)
				}
			}
		}
		for _, w := range feed.Warnings {
			if w.URL != feed.URL || w.Line < 1 {
				t.Fatalf("warning without position: %+v", w)
			}
		}
	})
}
