// Package resourcesync reads and writes the documents of the ResourceSync
// framework (ANSI/NISO Z39.99-2017, and the 1.0 drafts): Source
// Descriptions, Capability Lists, Resource Lists, Change Lists, the
// manifests of Resource Dumps and Change Dumps, their indexes, and the
// payloads of Change and Framework Notifications. It does no I/O beyond an
// io.Reader or io.Writer: fetching documents, following links between them
// and deciding what a change means are the caller's job.
//
// # The model
//
// Every ResourceSync document is a Sitemap: a <urlset> (a Document whose
// Header.Root is URLSet) or a <sitemapindex> (SitemapIndex, an index of
// documents of the same capability, or a 1.0 archive). Its Header holds the
// root-level <rs:md> (MD; its Capability says what the document is) and
// <rs:ln> elements (Link). Each <url> or <sitemap> is an Entry: its <loc>,
// <lastmod>, <changefreq>, one <rs:md> and any number of <rs:ln>. The
// package keeps what the standard defines and nothing else; unknown
// elements and attributes are skipped.
//
// Values are normalised as they are read:
//   - <loc> and href are resolved against the document's URL (the docURL
//     given to NewReader or Parse; with "" they are kept as published);
//   - datetimes are time.Time in UTC (ParseTime; an absent one is the zero
//     time);
//   - an absent length is NoLength, an absent pri is 0;
//   - hashes are split into Hash values, md5, sha-1 and sha-256 as
//     lower-case hex (ParseHashes).
//
// # Reading
//
// A Reader streams a document of any size in memory that does not grow
// with the number of entries:
//
//	r, err := resourcesync.NewReader(body, docURL, resourcesync.Options{})
//	h, err := r.Header()     // root element, root rs:md and rs:ln
//	for {
//		e, err := r.Next()   // one <url> or <sitemap>; io.EOF after the last
//		...
//	}
//
// NewReader decompresses a gzip stream transparently (it looks at the first
// two bytes, not at the URL). Header reads up to the first entry; Next calls
// it if the caller did not. After an error, Next keeps returning it. Parse
// reads a whole document into a Document, for small ones.
//
// The reader checks what it must to hand out correct values: the document
// is well-formed XML in UTF-8 (or US-ASCII), the root is urlset or
// sitemapindex in the Sitemap namespace, md and ln elements are in the
// ResourceSync namespace, each entry has exactly one <loc> and at most one
// <rs:md>, and numbers, datetimes and hashes parse. It does not check that
// a document's capability is the one its caller expected, nor the
// standard's other MUSTs (an at attribute on a Resource List, an up link):
// the caller decides what it needs.
//
// # Errors
//
// A document that cannot be read fails with a *ParseError naming the
// document's URL, line and column. Its Err is one of these, for errors.Is:
//
//   - ErrNotXML: not well-formed XML, or an encoding other than UTF-8;
//   - ErrNamespace: a missing or wrong namespace on the root or an rs element;
//   - ErrStructure: not a Sitemap document (another root, an entry without
//     <loc>, a second <loc> or <rs:md> in an entry, a second root <rs:md>);
//   - ErrValue: a number, datetime or hash that cannot be read;
//   - ErrTooLarge, ErrTooManyEntries: a limit was reached (see below).
//
// A failure of the underlying io.Reader is wrapped as well, so errors.Is
// finds it too. A bad gzip stream is a *ParseError from NewReader.
//
// # Limits
//
// Options bounds what a Reader accepts, so a hostile or broken Source cannot
// exhaust memory: MaxBytes (default DefaultMaxBytes, 64 MiB) counts the
// bytes after decompression, and MaxEntries (default DefaultMaxEntries,
// 1,000,000) the entries. A document over either fails with ErrTooLarge or
// ErrTooManyEntries at the point it crossed the limit; the entries before it
// have been returned already.
//
// # Warnings
//
// Some deviations that real Sources publish are read, not refused: a
// datetime without a time zone (taken as UTC) or with a space for the T, a
// base64 hash (converted to hex), <rs:md> before <loc>, whitespace before
// the XML declaration, an unknown capability or change value, more than
// 50,000 entries (the Sitemap limit), root <rs:md> or <rs:ln> after the
// first entry (ignored), a URL that cannot be parsed (kept as published),
// a Resource List, Resource Dump or manifest without at, a change document
// without from, changes out of time order or dated outside from and until,
// a <loc> listed twice where each resource is listed once (among the first
// 50,000 entries), a capability a Capability List names twice, a manifest
// entry without path, an attribute of the standard's written with the
// ResourceSync or Atom namespace's prefix (ignored). Each kind is
// described once per document, at its first place, and counted. Each kind is reported once per document as a Warning
// with its line, the clause of ResourceSync 1.1 (Z39.99-2017) it departs
// from and how it was read: Reader.Warnings, or Document.Warnings from
// Parse. WarnKind.At makes the same warnings for the deviations a caller
// finds above the parser (a document without capability, say).
//
// # Writing
//
// A Writer streams a document: NewWriter writes the XML declaration, the
// root element with both namespaces and the header's rs:ln and rs:md; each
// Write writes one Entry; Close writes the closing tag and flushes (it does
// not close the io.Writer). WriteDocument writes a whole Document. Times are
// written in UTC (FormatTime), and absent values (zero times, NoLength, a
// pri of 0, empty strings) are left out. Set Length to NoLength in every MD
// and Link that has no length: a zero Length is written as length="0" on an
// entry's rs:md.
//
// rsfs's own test Source (tests/sourcetest) renders its documents with the
// Writer, so the Reader and Writer are also tested against documents written
// by hand from the standard (testdata).
package resourcesync
