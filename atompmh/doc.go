// Package atompmh reads the Atom Feed Protocol for Metadata Harvesting 1.0
// (Atom-PMH, draft 2012-11-23): Atom Feed Documents (RFC 4287) chained as
// an archived feed (RFC 5005) whose entries publish a pool of metadata
// records, each with one or more representations. It does no I/O of its
// own: Reader reads one document from an io.Reader, and Harvester walks a
// feed through a Fetch function the caller provides.
//
// # Reading
//
// A Reader streams a document in memory that does not grow with the number
// of entries:
//
//	r, err := atompmh.NewReader(body, docURL, atompmh.Options{})
//	head, err := r.Header() // feed metadata up to the first entry
//	for {
//		e, err := r.Next()  // one entry; io.EOF after the last
//		...
//	}
//
// Of the head it keeps atom:id, atom:title, atom:updated, the self,
// current, prev-archive and next-archive links, fh:complete and
// fh:archive (namespace http://purl.org/syndication/history/1.0). Of an
// entry: atom:id, atom:updated, atom:title, its alternate links (a link
// without rel is alternate; rel may also be the IANA IRI of alternate)
// with href, type and length, and whether it has an atom:content and
// whether that is empty (no src, no child element, only white space).
// Elements inside an entry's children (an atom:source's id or links) are
// not the entry's. Kind classifies an entry as the specification's
// implementation notes do: active (at least one alternate link),
// deletion (no alternate link and an empty atom:content), or other (the
// specification defines nothing else; the harvest skips it). An entry with
// both alternate links and content is read as active, with a warning.
//
// Values are normalised as they are read:
//   - href values are resolved against xml:base, nested as XML Base says
//     (each element's xml:base against its parent's base, RFC 3986 section
//     5), starting from the document URL;
//   - atom:updated is an RFC 3339 date-time, returned in UTC (ParseTime).
//     One without a zone is read as UTC with a warning;
//   - atom:id is kept as published and compared as a string.
//
// # Errors and warnings
//
// A document that cannot be read fails with a *ParseError naming the
// document's URL, line and column; its Err is ErrNotXML (not well-formed,
// an encoding other than UTF-8 or US-ASCII, or any document type
// declaration: no DTD is read, so no entity is ever expanded), ErrNamespace
// or ErrStructure (not an atom:feed root; an Atom Entry Document is named
// as such), ErrTooLarge or ErrTooManyEntries. The entries returned before
// an error stand; Next keeps returning the error.
//
// Entries without atom:id or with an atom:updated that is absent or not
// a date-time are skipped, each with a warning naming the document, the
// line and column of the entry and its id if it has one; the entries
// around it are read. Other deviations are warned about once per document
// (Reader.Warnings, Feed.Warnings). At most Options.MaxWarnings are kept;
// the rest are counted in a last warning.
//
// # Limits
//
// Options.MaxBytes (64 MiB) bounds the decompressed document,
// MaxTokenBytes (1 MiB) one token or one element's text, MaxDepth (256)
// the nesting and MaxEntries (1,000,000) the entries. A limit fails the
// document at the point it is crossed: an endless attribute is refused
// after MaxTokenBytes, not after MaxBytes. A gzip stream (magic bytes
// 1f 8b, whatever the URL or headers say) is decompressed transparently.
// The XML is tokenized by encoding/xml in strict mode.
//
// # Harvesting
//
// Harvester.Harvest walks the feed and updates a State (the pool, the
// harvest mark, the deletions it must remember):
//
//   - It starts at the subscription document and follows prev-archive. It
//     stops after the first document that is complete (fh:complete), that
//     has no prev-archive, or whose atom:updated is no newer than the
//     mark: the subscription document's atom:updated at the last whole
//     harvest. The first harvest walks the whole chain. The document it
//     stops at is read too: an entry published at the mark's very second
//     after the last harvest read it would be missed otherwise, and the
//     rules below make re-reading harmless. So an incremental harvest
//     fetches the new documents plus one.
//   - Each record (atom:id) takes its newest entry by atom:updated: an
//     older entry of the same id is historical. Ties, which the
//     specification says should not happen: a deletion wins over an
//     active entry of the same time; of two active entries, the one read
//     first wins, that is the one in the newer document, and in one
//     document the first; a record held from an earlier harvest is
//     replaced only by a strictly newer entry (a deletion: by one of the
//     same time or newer). A deletion entry removes the record and is
//     remembered (State.Deleted), so that its older active entry met
//     later in an archive does not bring it back.
//   - A complete document is the whole pool: the pool becomes the active
//     entries read in this walk, and a record absent from them is deleted
//     whatever its time (the deletion takes the document's atom:updated).
//     A prev-archive link on a complete document is not followed.
//   - A document that cannot be fetched or read (a broken chain), a cycle
//     (a prev-archive to a document read in this walk), or more than
//     MaxDocuments documents end the walk with a warning naming the
//     document that links on. What was read is applied, since the newest
//     entry wins whatever order entries come in; but the mark is kept and
//     State.Broken set, so the next harvest fetches the subscription
//     document unconditionally and walks down to the old mark again. If
//     the subscription document itself cannot be fetched or read, Harvest
//     fails and the state is untouched.
//   - The result lists the net change of each record against the state
//     before (create, update, delete) in atom:updated order, ties by id:
//     the order in which to apply them. A first harvest's changes are all
//     creations.
//   - A Fetch may answer the subscription document ErrNotModified when
//     asked for a conditional fetch (a 304 to If-None-Match): nothing has
//     changed and nothing else is fetched.
//   - Archive documents may change (the specification allows it). The
//     harvest keeps the SHA-256 of each archive document it read whole
//     (State.Digests); when the document it would stop at, read before,
//     has changed, it warns and walks on to the end of the chain, so that
//     entries a producer put into older archives are not lost. A change to
//     an archive older than the stop document is not seen: the walk never
//     reads it.
//   - A document newer than the one linking to it, a subscription document
//     older than the mark, a document without atom:updated (the walk then
//     goes on) are warned about.
//
// # Missing representations (a proposal for the fetch layer)
//
// The specification leaves to the consumer what a record is when some of
// its representations cannot be resolved, and says 404 and 410 mean a
// representation is gone while 401 and 500 may not. The proposal: a
// representation answering 404 or 410 (to the HEAD that learns its
// length, or to a read) is taken out of the tree, and the record stays as
// long as one representation remains; when none remains the record is
// treated as deleted, until an entry newer than the one that named the
// representations brings it back. Any other failure (401, 403, 5xx, a
// network error) keeps the file, whose reads fail with EIO, and is
// retried at the next harvest. 403 is not "gone": the specification's
// "404 (forbidden)" is read as a typo for 403, and an access problem is
// not a deletion.
package atompmh
