package resourcesync

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Writer writes a document as a stream: the header first, then entries one
// at a time. It is used by test Sources and by tools that publish.
type Writer struct {
	w    *bufio.Writer
	root RootKind
	err  error
}

// NewWriter writes the XML declaration, the root element and the header's
// rs:ln and rs:md elements.
func NewWriter(w io.Writer, h *Header) *Writer {
	wr := &Writer{w: bufio.NewWriterSize(w, 64<<10), root: h.Root}
	wr.printf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<%s xmlns=\"%s\" xmlns:rs=\"%s\">\n",
		h.Root, SitemapNS, RSNS)
	for i := range h.Links {
		wr.link("  ", &h.Links[i])
	}
	wr.md("  ", &h.MD)
	return wr
}

// Write writes one entry.
func (wr *Writer) Write(e *Entry) error {
	el := "url"
	if wr.root == SitemapIndex {
		el = "sitemap"
	}
	wr.printf("  <%s>\n    <loc>%s</loc>\n", el, escape(e.Loc))
	if !e.Lastmod.IsZero() {
		wr.printf("    <lastmod>%s</lastmod>\n", FormatTime(e.Lastmod))
	}
	if e.ChangeFreq != "" {
		wr.printf("    <changefreq>%s</changefreq>\n", escape(e.ChangeFreq))
	}
	wr.md("    ", &e.MD)
	for i := range e.Links {
		wr.link("    ", &e.Links[i])
	}
	wr.printf("  </%s>\n", el)
	return wr.err
}

// Close writes the closing root tag and flushes. It does not close the
// underlying writer.
func (wr *Writer) Close() error {
	wr.printf("</%s>\n", wr.root)
	if wr.err != nil {
		return wr.err
	}
	return wr.w.Flush()
}

// WriteDocument writes a whole document.
func WriteDocument(w io.Writer, d *Document) error {
	wr := NewWriter(w, &d.Header)
	for i := range d.Entries {
		if err := wr.Write(&d.Entries[i]); err != nil {
			return err
		}
	}
	return wr.Close()
}

func (wr *Writer) printf(format string, args ...any) {
	if wr.err == nil {
		_, wr.err = fmt.Fprintf(wr.w, format, args...)
	}
}

func (wr *Writer) md(indent string, md *MD) {
	var b attrs
	b.add("capability", string(md.Capability))
	b.time("at", md.At)
	b.time("completed", md.Completed)
	b.time("from", md.From)
	b.time("until", md.Until)
	b.time("modified", md.Modified)
	b.time("datetime", md.Datetime)
	b.add("change", string(md.Change))
	b.add("hash", joinHashes(md.Hashes))
	if md.Length != NoLength && (md.Length != 0 || md.Capability == "") {
		b.add("length", strconv.FormatInt(md.Length, 10))
	}
	b.add("type", md.Type)
	b.add("path", md.Path)
	b.add("encoding", md.Encoding)
	if b.Len() > 0 {
		wr.printf("%s<rs:md%s/>\n", indent, b.String())
	}
}

func (wr *Writer) link(indent string, l *Link) {
	var b attrs
	b.add("rel", l.Rel)
	b.add("href", l.Href)
	if l.Pri != 0 {
		b.add("pri", strconv.Itoa(l.Pri))
	}
	b.add("hash", joinHashes(l.Hashes))
	if l.Length != NoLength && l.Length != 0 {
		b.add("length", strconv.FormatInt(l.Length, 10))
	}
	b.time("modified", l.Modified)
	b.add("type", l.Type)
	b.add("path", l.Path)
	wr.printf("%s<rs:ln%s/>\n", indent, b.String())
}

type attrs struct{ strings.Builder }

func (b *attrs) add(name, value string) {
	if value == "" {
		return
	}
	b.WriteString(" ")
	b.WriteString(name)
	b.WriteString(`="`)
	b.WriteString(escape(value))
	b.WriteString(`"`)
}

func (b *attrs) time(name string, t time.Time) {
	if !t.IsZero() {
		b.add(name, FormatTime(t))
	}
}

func joinHashes(hs []Hash) string {
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = h.String()
	}
	return strings.Join(parts, " ")
}

// FormatTime formats t as a W3C datetime in UTC, with fractional seconds only
// when t has them.
func FormatTime(t time.Time) string {
	return t.UTC().Format(time.RFC3339Nano)
}

func escape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
