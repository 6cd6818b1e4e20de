package atompmh_test

import (
	"context"
	"fmt"
	"io"
	"strings"

	"rsfs/atompmh"
)

// The Fetch a caller provides; here two documents of the specification's
// Example 2, the subscription document with a deletion entry and the
// archive document before it.
var exampleDocs = map[string]string{
	"http://example.org/feed/archived": `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <link rel="prev-archive" href="http://example.org/archived/2012/11/01"/>
  <updated>2012-11-02T14:00:00Z</updated>
  <id>urn:uuid:3ce05531-b9c0-4a7d-8966-4d9a9a3a0695</id>
  <title>Example 2</title>
  <entry>
    <title>Alpha data collection (deletion entry)</title>
    <id>urn:uuid:177d5415-c443-410f-a5b6-44bf8433594f</id>
    <updated>2012-11-01T23:00:00Z</updated>
    <content/>
  </entry>
</feed>`,
	"http://example.org/archived/2012/11/01": `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:fh="http://purl.org/syndication/history/1.0">
  <updated>2012-11-01T14:00:00Z</updated>
  <id>urn:uuid:3ce05531-b9c0-4a7d-8966-4d9a9a3a0695</id>
  <title>Example 1</title>
  <fh:archive/>
  <entry>
    <title>Alpha data collection</title>
    <id>urn:uuid:177d5415-c443-410f-a5b6-44bf8433594f</id>
    <updated>2012-11-01T07:00:00Z</updated>
    <link rel="alternate" type="application/atom+xml" href="http://example.org/entry/0001"/>
  </entry>
  <entry>
    <title>Beta data collection</title>
    <id>urn:uuid:e7aca47e-76c5-4648-948b-583ffdaafa0d</id>
    <updated>2012-10-31T12:35:52Z</updated>
    <link type="application/atom+xml" href="/entry/0002"/>
    <link type="application/rdf+xml" href="/entry/0002.rdf"/>
  </entry>
</feed>`,
}

func ExampleHarvester_Harvest() {
	fetch := func(_ context.Context, url string, _ bool) (io.ReadCloser, error) {
		doc, ok := exampleDocs[url]
		if !ok {
			return nil, fmt.Errorf("no document at %s", url)
		}
		return io.NopCloser(strings.NewReader(doc)), nil
	}
	h := &atompmh.Harvester{Fetch: fetch}
	st := atompmh.NewState()
	res, err := h.Harvest(context.Background(), "http://example.org/feed/archived", st)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("documents:", len(res.Documents), "whole:", res.Whole, "mark:", st.Mark.Format("2006-01-02T15:04Z"))
	fmt.Printf("entries: %+v\n", res.Counts)
	for id, e := range st.Pool {
		fmt.Println(id, e.Title)
		for _, l := range e.Links {
			fmt.Println("  ", l.Type, l.Href)
		}
	}
	// Output:
	// documents: 2 whole: true mark: 2012-11-02T14:00Z
	// entries: {Active:1 Historical:1 Deletion:1 Other:0}
	// urn:uuid:e7aca47e-76c5-4648-948b-583ffdaafa0d Beta data collection
	//    application/atom+xml http://example.org/entry/0002
	//    application/rdf+xml http://example.org/entry/0002.rdf
}
