package resourcesync

import (
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/require"
)

// This file checks the package's own XML scanner against encoding/xml.
//
// The reference parser below reads a document with encoding/xml (Strict, no
// entity map, a CharsetReader that accepts only the UTF-8 labels this package
// accepts) and extracts the same model by the same ResourceSync rules,
// written independently of reader.go and using only the exported ParseTime
// and ParseHashes for values. FuzzAgainstEncodingXML then requires:
//
//	(a) what this package accepts, the reference accepts, with an equal
//	    Document;
//	(b) what encoding/xml rejects, this package rejects;
//	(c) what this package rejects and the reference accepts is rejected for
//	    one of the reasons in extraRejections below.
//
// Where encoding/xml departs from the XML 1.0 and Namespaces in XML
// specifications, this package follows the specifications:
//
//   - encoding/xml accepts text, CDATA sections and further elements
//     outside the root element, a document type declaration anywhere, any
//     "<!...>" directive, an XML declaration anywhere, attributes without
//     whitespace between them, duplicate attributes, the names ":a" and "a:",
//     and a character reference to a surrogate (which it turns into U+FFFD).
//     This package rejects all of these (XML 1.0 §2.1, §2.8, §3.1, §4.1,
//     WFC Legal Character, WFC Unique Att Spec; Namespaces §3).
//   - encoding/xml does not normalise attribute values (XML 1.0 §3.3.3):
//     a literal tab, newline or carriage return in an attribute value stays
//     as it is. This package turns each into a space, and keeps the
//     characters a reference such as "&#9;" stands for. The reference parser
//     applies the same normalisation to the raw attribute text before
//     decoding it with encoding/xml (see normalisedAttrs).

// extraRejections are the messages of errors with which this package may
// reject a document the reference accepts: the specification rules above,
// and the Options bounds.
var extraRejections = []string{
	"text outside the root element",
	"more than one root element",
	"CDATA section outside the root element",
	"DOCTYPE after the root element",
	"DOCTYPE inside an element",
	"unknown markup declaration",
	"XML declaration not at the start of the document",
	"malformed XML declaration",
	"unsupported encoding",
	"missing space before attribute",
	"duplicate attribute",
	"invalid qualified name",
	"character reference to a surrogate",
}

// refBinding is a namespace prefix bound at an element depth.
type refBinding struct {
	prefix, uri string
	depth       int
}

// refToken is one token of the reference parser: names as written (prefix
// not translated), attribute values normalised.
type refToken struct {
	start, end    bool
	prefix, local string
	attrs         []xml.Attr
	text          string
}

// refParser extracts a Document from encoding/xml's token stream.
type refParser struct {
	dec, raw *xml.Decoder
	data     []byte
	depth    int
	ns       []refBinding
	base     *url.URL
	docURL   string
	xmlErr   error // the error encoding/xml reported, if any
}

// errRefRejected marks a reference rejection for a ResourceSync reason.
var errRefRejected = errors.New("reference: not a valid ResourceSync document")

func refCharsetReader(label string, r io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return r, nil
	}
	return nil, fmt.Errorf("unsupported charset %q", label)
}

func newRefDecoder(data []byte) *xml.Decoder {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	d.CharsetReader = refCharsetReader
	return d
}

// referenceParse parses data with the reference parser. xmlErr is the
// error encoding/xml reported, if it rejected the input; err is any
// rejection, including the ResourceSync ones.
func referenceParse(data []byte, docURL string) (doc *Document, err, xmlErr error) {
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err, err
		}
		if data, err = io.ReadAll(io.LimitReader(zr, DefaultMaxBytes)); err != nil {
			return nil, err, err
		}
	}
	p := &refParser{dec: newRefDecoder(data), raw: newRefDecoder(data), data: data, docURL: docURL}
	if docURL != "" {
		p.base, _ = url.Parse(docURL)
	}
	doc, err = p.document()
	return doc, err, p.xmlErr
}

// token reads the next token from both decoders in step: the translating
// decoder checks nesting and the end of input, the raw one keeps prefixes.
func (p *refParser) token() (refToken, error) {
	_, err := p.dec.Token()
	if err == io.EOF {
		return refToken{}, io.EOF
	}
	if err != nil {
		p.xmlErr = err
		return refToken{}, err
	}
	from := p.raw.InputOffset()
	tok, err := p.raw.RawToken()
	if err != nil {
		return refToken{}, fmt.Errorf("reference decoders out of step: %w", err)
	}
	switch t := tok.(type) {
	case xml.StartElement:
		p.depth++
		rt := refToken{start: true, prefix: t.Name.Space, local: t.Name.Local}
		rt.attrs = normalisedAttrs(t.Attr, p.data[from:p.raw.InputOffset()])
		p.bind(rt.attrs)
		return rt, nil
	case xml.EndElement:
		p.depth--
		p.unbind()
		return refToken{end: true, prefix: t.Name.Space, local: t.Name.Local}, nil
	case xml.CharData:
		return refToken{text: string(t)}, nil
	}
	return refToken{}, nil
}

// normalisedAttrs applies XML 1.0 §3.3.3 attribute-value normalisation,
// which encoding/xml leaves out: each literal whitespace character becomes
// a space, while characters written as references stay. When a value holds
// a tab or newline, its raw text is taken from the start tag, its literal
// whitespace replaced, and the result decoded again by encoding/xml.
func normalisedAttrs(attrs []xml.Attr, tag []byte) []xml.Attr {
	var raws map[string]string
	for i, a := range attrs {
		if !strings.ContainsAny(a.Value, "\t\n") {
			continue
		}
		if raws == nil {
			raws = rawAttrLiterals(tag)
		}
		lit := raws[attrKey(a.Name)]
		lit = strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ", "\t", " ").Replace(lit)
		d := newRefDecoder([]byte("<a v=" + lit + "/>"))
		tok, err := d.RawToken()
		if err != nil {
			panic(fmt.Sprintf("re-decoding attribute %s: %v", lit, err))
		}
		attrs[i].Value = tok.(xml.StartElement).Attr[0].Value
	}
	return attrs
}

func attrKey(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// rawAttrLiterals splits a start tag that encoding/xml accepted into its
// attributes' quoted literals, quotes included, by qualified name.
func rawAttrLiterals(tag []byte) map[string]string {
	s := string(tag)
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	i := 1
	for i < len(s) && !isSpace(s[i]) && s[i] != '/' && s[i] != '>' {
		i++
	}
	out := map[string]string{}
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) || s[i] == '/' || s[i] == '>' {
			return out
		}
		j := i
		for j < len(s) && !isSpace(s[j]) && s[j] != '=' {
			j++
		}
		name := s[i:j]
		for j < len(s) && (isSpace(s[j]) || s[j] == '=') {
			j++
		}
		q := s[j]
		end := j + 1 + strings.IndexByte(s[j+1:], q)
		if _, dup := out[name]; !dup {
			out[name] = s[j : end+1]
		}
		i = end + 1
	}
}

func (p *refParser) bind(attrs []xml.Attr) {
	for _, a := range attrs {
		switch {
		case a.Name.Space == "" && a.Name.Local == "xmlns":
			p.ns = append(p.ns, refBinding{"", a.Value, p.depth})
		case a.Name.Space == "xmlns" && a.Name.Local != "xml" && a.Name.Local != "xmlns":
			p.ns = append(p.ns, refBinding{a.Name.Local, a.Value, p.depth})
		}
	}
}

func (p *refParser) unbind() {
	for len(p.ns) > 0 && p.ns[len(p.ns)-1].depth > p.depth {
		p.ns = p.ns[:len(p.ns)-1]
	}
}

// namespaceOf resolves a prefix; false if it is undeclared.
func (p *refParser) namespaceOf(prefix string) (string, bool) {
	for i := len(p.ns) - 1; i >= 0; i-- {
		if p.ns[i].prefix == prefix {
			return p.ns[i].uri, true
		}
	}
	switch prefix {
	case "":
		return "", true
	case "xml":
		return "http://www.w3.org/XML/1998/namespace", true
	}
	return "", false
}

func refReject(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errRefRejected, fmt.Sprintf(format, args...))
}

// classify names what an element inside the root means: "url", "loc",
// "md", ... or "" for anything else.
func (p *refParser) classify(t refToken) (string, error) {
	uri, ok := p.namespaceOf(t.prefix)
	if !ok {
		return "", refReject("undeclared prefix %q", t.prefix)
	}
	rsName := t.local == "md" || t.local == "ln"
	mistypedRS := strings.HasPrefix(strings.TrimPrefix(strings.TrimPrefix(uri, "https://"), "http://"), "www.openarchives.org/rs")
	switch {
	case uri == RSNS:
		if rsName {
			return t.local, nil
		}
	case uri == SitemapNS:
		if rsName {
			return "", refReject("<%s> in the Sitemap namespace", t.local)
		}
		switch t.local {
		case "url", "sitemap", "loc", "lastmod", "changefreq":
			return t.local, nil
		}
	case rsName && (uri == "" || mistypedRS):
		return "", refReject("<%s> in namespace %q", t.local, uri)
	}
	return "", nil
}

// document reads the whole token stream.
func (p *refParser) document() (*Document, error) {
	doc := &Document{Header: Header{URL: p.docURL, MD: MD{Length: NoLength}}}
	root, err := p.firstElement()
	if err != nil {
		return nil, err
	}
	uri, ok := p.namespaceOf(root.prefix)
	switch {
	case !ok:
		return nil, refReject("undeclared prefix on the root")
	case root.local == "urlset":
		doc.Header.Root = URLSet
	case root.local == "sitemapindex":
		doc.Header.Root = SitemapIndex
	default:
		return nil, refReject("root <%s>", root.local)
	}
	if uri != SitemapNS {
		return nil, refReject("root in namespace %q", uri)
	}
	if err := p.rootChildren(doc); err != nil {
		return nil, err
	}
	for { // whatever follows the root: encoding/xml must accept it
		if _, err := p.token(); err == io.EOF {
			return doc, nil
		} else if err != nil {
			return nil, err
		}
	}
}

func (p *refParser) firstElement() (refToken, error) {
	for {
		t, err := p.token()
		if err == io.EOF {
			return t, refReject("no root element")
		}
		if err != nil || t.start {
			return t, err
		}
	}
}

// rootChildren reads the children of the root up to its end tag.
func (p *refParser) rootChildren(doc *Document) error {
	inEntries, sawMD := false, false
	for {
		t, err := p.token()
		if err == io.EOF {
			return refReject("end of input inside the root")
		}
		if err != nil {
			return err
		}
		if t.end && p.depth == 0 {
			return nil
		}
		if !t.start {
			continue
		}
		kind, err := p.classify(t)
		if err != nil {
			return err
		}
		if (kind == "url" && doc.Header.Root == SitemapIndex) || (kind == "sitemap" && doc.Header.Root == URLSet) {
			return refReject("<%s> inside %s", kind, doc.Header.Root)
		}
		switch {
		case kind == "url" || kind == "sitemap":
			inEntries = true
			e, err := p.entry()
			if err != nil {
				return err
			}
			doc.Entries = append(doc.Entries, e)
			continue
		case kind == "md" && !inEntries:
			if sawMD { // merged, as the reader does (mergeMD)
				more, err := p.md(t.attrs)
				if err != nil {
					return err
				}
				mergeMD(&doc.Header.MD, &more)
				break
			}
			sawMD = true
			if doc.Header.MD, err = p.md(t.attrs); err != nil {
				return err
			}
		case kind == "ln" && !inEntries:
			l, err := p.link(t.attrs)
			if err != nil {
				return err
			}
			doc.Header.Links = append(doc.Header.Links, l)
		}
		if err := p.skipElement(); err != nil {
			return err
		}
	}
}

// skipElement reads to the end of the element just started.
func (p *refParser) skipElement() error {
	depth := p.depth
	for p.depth >= depth {
		if _, err := p.token(); err == io.EOF {
			return refReject("end of input")
		} else if err != nil {
			return err
		}
	}
	return nil
}

// elementText returns the trimmed character data directly inside the
// element just started.
func (p *refParser) elementText() (string, error) {
	depth := p.depth
	var b strings.Builder
	for {
		t, err := p.token()
		if err == io.EOF {
			return "", refReject("end of input")
		}
		if err != nil {
			return "", err
		}
		if p.depth < depth {
			return strings.Trim(b.String(), " \t\r\n"), nil
		}
		if !t.start && !t.end && p.depth == depth {
			b.WriteString(t.text)
		}
	}
}

// entry reads a <url> or <sitemap> whose start tag was just read.
func (p *refParser) entry() (Entry, error) {
	e := Entry{MD: MD{Length: NoLength}}
	depth := p.depth
	haveLoc, haveMD := false, false
	for {
		t, err := p.token()
		if err == io.EOF {
			return e, refReject("end of input in an entry")
		}
		if err != nil {
			return e, err
		}
		if p.depth < depth {
			break
		}
		if !t.start {
			continue
		}
		kind, err := p.classify(t)
		if err != nil {
			return e, err
		}
		switch kind {
		case "loc":
			if haveLoc {
				return e, refReject("second loc")
			}
			haveLoc = true
			text, err := p.elementText()
			if err != nil {
				return e, err
			}
			if text != "" {
				e.Loc = p.resolve(text)
			}
		case "lastmod":
			text, err := p.elementText()
			if err != nil {
				return e, err
			}
			if e.Lastmod, _, err = ParseTime(text); err != nil {
				return e, refReject("lastmod: %v", err)
			}
		case "changefreq":
			if e.ChangeFreq, err = p.elementText(); err != nil {
				return e, err
			}
		case "md":
			if haveMD { // merged, as the reader does (mergeMD)
				more, err := p.md(t.attrs)
				if err != nil {
					return e, err
				}
				mergeMD(&e.MD, &more)
				err = p.skipElement()
				if err != nil {
					return e, err
				}
				continue
			}
			haveMD = true
			if e.MD, err = p.md(t.attrs); err != nil {
				return e, err
			}
			err = p.skipElement()
		case "ln":
			var l Link
			if l, err = p.link(t.attrs); err != nil {
				return e, err
			}
			e.Links = append(e.Links, l)
			err = p.skipElement()
		default:
			err = p.skipElement()
		}
		if err != nil {
			return e, err
		}
	}
	if !haveLoc || e.Loc == "" {
		return e, refReject("entry without loc")
	}
	return e, nil
}

func (p *refParser) resolve(ref string) string {
	if p.base == nil {
		return ref
	}
	u, err := url.Parse(ref)
	if err != nil {
		return ref
	}
	return p.base.ResolveReference(u).String()
}

func refInt(v string, limit int64) (int64, error) {
	v = strings.Trim(v, " \t\r\n")
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || v[0] == '+' || v[0] == '-' || n > limit {
		return 0, refReject("bad number %q", v)
	}
	return n, nil
}

// md reads the unprefixed attributes of an rs:md.
func (p *refParser) md(attrs []xml.Attr) (MD, error) {
	md := MD{Length: NoLength}
	for _, a := range attrs {
		if a.Name.Space != "" {
			continue
		}
		v, trimmed := a.Value, strings.Trim(a.Value, " \t\r\n")
		var err error
		switch a.Name.Local {
		case "capability":
			md.Capability = refCapability(trimmed)
		case "at":
			md.At, _, err = ParseTime(v)
		case "completed":
			md.Completed, _, err = ParseTime(v)
		case "from":
			md.From, _, err = ParseTime(v)
		case "until":
			md.Until, _, err = ParseTime(v)
		case "modified":
			md.Modified, _, err = ParseTime(v)
		case "datetime":
			md.Datetime, _, err = ParseTime(v)
		case "change":
			md.Change = Change(trimmed)
		case "hash":
			md.Hashes, _, err = ParseHashes(v)
		case "length":
			md.Length, err = refInt(v, 1<<63-1)
		case "type":
			md.Type = trimmed
		case "path":
			md.Path = v
		case "encoding":
			md.Encoding = trimmed
		}
		if err != nil {
			return md, refReject("rs:md %s=%q: %v", a.Name.Local, v, err)
		}
	}
	return md, nil
}

// link reads the unprefixed attributes of an rs:ln.
func (p *refParser) link(attrs []xml.Attr) (Link, error) {
	l := Link{Length: NoLength}
	for _, a := range attrs {
		if a.Name.Space != "" {
			continue
		}
		v, trimmed := a.Value, strings.Trim(a.Value, " \t\r\n")
		var err error
		switch a.Name.Local {
		case "rel":
			l.Rel = trimmed
		case "href":
			if trimmed != "" {
				l.Href = p.resolve(trimmed)
			}
		case "pri":
			var n int64
			n, err = refInt(v, 999_999)
			l.Pri = int(n)
		case "hash":
			l.Hashes, _, err = ParseHashes(v)
		case "length":
			l.Length, err = refInt(v, 1<<63-1)
		case "modified":
			l.Modified, _, err = ParseTime(v)
		case "type":
			l.Type = trimmed
		case "path":
			l.Path = v
		}
		if err != nil {
			return l, refReject("rs:ln %s=%q: %v", a.Name.Local, v, err)
		}
	}
	return l, nil
}

// differentialSeeds are the conformance examples, generated lists and
// documents that exercise the scanner's corners.
func differentialSeeds(tb testing.TB) [][]byte {
	files, err := filepath.Glob(filepath.Join(conformanceDir, "spec-1.*-examples", "*.xml"))
	require.NoError(tb, err)
	require.NotEmpty(tb, files)
	var seeds [][]byte
	for _, name := range files {
		data, err := os.ReadFile(name)
		require.NoError(tb, err)
		seeds = append(seeds, data)
	}
	seeds = append(seeds, resourceList(3), resourceList(1))
	for _, s := range []string{
		docStart + `<url><loc>a b</loc><lastmod>2013-01-02 13:00</lastmod><rs:md hash="md5:FYSr3469yYAqwManQCwDtg==" length="0" capability="x"/><rs:ln href="&#xA;x"/></url></urlset>`,
		docStart + `<url><loc><![CDATA[http://a/]]>&amp;&#x10FFFF;</loc></url><rs:md/></urlset>`,
		"<!DOCTYPE urlset [<!ENTITY x 'y'> <!-- ' -->]>\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>&#x000041;</loc></url></urlset>`,
		docStart + "<!-- a -- b --><url><loc>x</loc><rs:md path=\"a\tb&#9;c\r\nd\" type=' t\t'/></url></urlset>",
		`<?xml version="1.1"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>`,
		`<?xml version="1.0" encoding = "utf-8" x encoding="latin1"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>`,
		docStart + "<url><loc>a]]>b</loc></url><?1 x?></urlset>",
		docStart + "<url><loc>\u00e9\u3000<![CDATA[\r\x01]]></loc><\u00e9l\u0300/><\u0300x/></url></urlset>",
		"<sitemapindex xmlns='http://www.sitemaps.org/schemas/sitemap/0.9' xmlns:r='http://www.openarchives.org/rs/terms/'><sitemap><r:md at='2013-01-01T00:00:00+01:00'/><loc>/b</loc></sitemap></sitemapindex>",
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// checkAgainstReference asserts properties (a), (b) and (c) for one input.
func checkAgainstReference(t *testing.T, data []byte) {
	got, err := Parse(bytes.NewReader(data), testURL, Options{})
	checkOneByteReads(t, data, got, err)
	want, refErr, xmlErr := referenceParse(data, testURL)
	if err == nil {
		require.NoError(t, refErr, "this package accepts; the reference rejects")
		got.Warnings = nil
		require.Equal(t, want, got)
		return
	}
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	if xmlErr != nil || refErr != nil {
		return
	}
	if errors.Is(err, ErrTooLarge) || errors.Is(err, ErrTooManyEntries) {
		return // the Options bounds
	}
	for _, msg := range extraRejections {
		if strings.Contains(pe.Msg, msg) {
			return
		}
	}
	t.Fatalf("this package rejects what the reference accepts: %v", err)
}

// checkOneByteReads requires the same result from input read one byte at a
// time, where every token crosses a buffer refill: the scanner's fast paths
// must fall back to the general code without changing documents, warnings,
// errors or their positions.
func checkOneByteReads(t *testing.T, data []byte, want *Document, wantErr error) {
	got, err := Parse(iotest.OneByteReader(bytes.NewReader(data)), testURL, Options{})
	if wantErr == nil {
		require.NoError(t, err, "one byte at a time")
		require.Equal(t, want, got, "one byte at a time")
		return
	}
	var wantPE, gotPE *ParseError
	require.ErrorAs(t, wantErr, &wantPE)
	require.ErrorAs(t, err, &gotPE, "one byte at a time")
	require.Equal(t, [3]any{wantPE.Msg, wantPE.Line, wantPE.Column}, [3]any{gotPE.Msg, gotPE.Line, gotPE.Column},
		"error read one byte at a time")
}

func TestAgainstEncodingXMLSeeds(t *testing.T) {
	for i, data := range differentialSeeds(t) {
		t.Run(strconv.Itoa(i), func(t *testing.T) { checkAgainstReference(t, data) })
	}
}

func FuzzAgainstEncodingXML(f *testing.F) {
	for _, s := range differentialSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(checkAgainstReference)
}

// FuzzParseTimeFastPath checks the YYYY-MM-DDThh:mm:ssZ fast path against
// time.Parse, since the reference parser shares ParseTime with the reader.
func FuzzParseTimeFastPath(f *testing.F) {
	for _, s := range []string{"2013-01-02T13:00:00Z", "2000-02-29T23:59:59Z", "1900-02-29T00:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2013-13-01T00:00:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseUTCSeconds(s)
		want, err := time.Parse("2006-01-02T15:04:05Z", s)
		if len(s) == len("2006-01-02T15:04:05Z") { // time.Parse also takes a one-digit hour
			require.Equal(t, err == nil, ok, "%q: %v", s, err)
		}
		if ok {
			require.NoError(t, err, "%q", s)
			require.Equal(t, want.UTC(), got, "%q", s)
		}
	})
}

// refCapability reads a capability as the spec names them, accepting the
// spellings real Sources use for an index or in another case.
func refCapability(v string) Capability {
	standard := map[string]bool{"description": true, "capabilitylist": true, "resourcelist": true,
		"resourcedump": true, "resourcedump-manifest": true, "changelist": true, "changedump": true,
		"changedump-manifest": true, "framework-notification": true, "change-notification": true}
	name := strings.ToLower(v)
	for _, form := range []string{name, strings.TrimSuffix(name, "-index"), strings.TrimSuffix(name, "_index"), strings.TrimSuffix(name, "index")} {
		if standard[form] {
			return Capability(form)
		}
	}
	return Capability(v)
}
