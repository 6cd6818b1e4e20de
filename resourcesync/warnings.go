package resourcesync

import "fmt"

// WarnKind is a kind of tolerated deviation from the standard. Each is
// reported once per document, with the clause it departs from and how
// rsfs read it (warnTable). The kinds found above the parser (by
// discovery, the loaders) are exported, so that their warnings come from
// the same table.
type WarnKind uint8

const (
	warnNoZone WarnKind = iota
	warnSpaceSeparator
	warnBase64Hash
	warnHashForm
	warnMDBeforeLoc
	warnLeadingSpace
	warnUnknownCapability
	warnUnknownChange
	warnManyEntries
	warnHeaderAfterEntries
	warnBadURL
	warnNonStandardCapability
	warnUserinfo
	warnNoAt
	warnNoFrom
	warnUnordered
	warnOutsideSpan
	warnRepeatedLoc
	warnCapabilityTwice
	warnNoPath
	warnPrefixedAttr
	// WarnNoCapability: a document without rs:md capability, read as a
	// Resource List.
	WarnNoCapability
	// WarnEntryNoCapability: a Capability List entry without capability.
	WarnEntryNoCapability
	// WarnUnnamedSet: a Capability List (or another document) that the
	// document its up or index link leads to does not name.
	WarnUnnamedSet
	// WarnNotCapabilityList: a Source Description entry that names
	// another capability.
	WarnNotCapabilityList
	warnPackageAsDump
	warnNoChange
	warnRepeatedMD
	warnConflictingMD
	warnInvertedRange
	warnCount
)

// warnSpec is what a kind of warning says: the deviation, the clause of
// ResourceSync 1.1 (ANSI/NISO Z39.99-2017, normative) or of the Sitemap
// protocol it departs from, and how rsfs read the document.
type warnSpec struct {
	msg, clause, reading string
}

// Clauses are cited by section of Z39.99-2017; "Table 4" is its Appendix
// A (normative), on the at and from attributes.
var warnTable = [warnCount]warnSpec{
	warnNoZone: {"datetime without time zone",
		"§7: values are W3C Datetime, whose times carry a zone designator", "UTC assumed"},
	warnSpaceSeparator: {"datetime with a space instead of T",
		"§7: values are W3C Datetime (YYYY-MM-DDThh:mm:ssTZD)", "read as T"},
	warnBase64Hash: {"base64 hash value",
		"§7 hash: each value is a hex-encoded digest", "converted to hex"},
	warnHashForm: {"hash value neither hex nor base64 of the algorithm's size",
		"§7 hash: each value is a hex-encoded digest", "kept as published"},
	warnMDBeforeLoc: {"rs:md before <loc>",
		"§7 Table 2 and the Sitemap schema: <loc> comes first in <url>", "read as if after <loc>"},
	warnLeadingSpace: {"whitespace before the XML declaration",
		"§7 Table 2; XML 1.0 §2.8: the declaration comes first", "skipped"},
	warnUnknownCapability: {"unknown capability",
		"§7 capability: the values this standard defines", "kept as published; no capability's rules applied"},
	warnUnknownChange: {"unknown change value",
		"§12.1, §13.2: change is created, updated or deleted", "applied as an update"},
	warnManyEntries: {"more than 50,000 entries",
		"§7 and the Sitemap protocol: at most 50,000 per document", "all read"},
	warnHeaderAfterEntries: {"root rs:md or rs:ln after the first entry",
		"§7 Table 2: they precede the entries", "ignored"},
	warnBadURL: {"URL that cannot be parsed",
		"§7 <loc>: the URI of the resource", "kept as published"},
	warnNonStandardCapability: {"non-standard capability name",
		"§7 capability: the values this standard defines (an index has its documents' capability)", "read as the standard one"},
	warnUserinfo: {"URL with userinfo; host",
		"§7 <loc>, and RFC 3986 §3.2.1: credentials do not belong in a URI", "userinfo removed (never sent)"},
	warnNoAt: {"no at on the root rs:md",
		"§10.1, §11.1, §11.2, Table 4: at is required on a Resource List, a Resource Dump, their indexes and a Resource Dump Manifest",
		"dated by completed (or 1.0's modified) if given, else undated: following starts at the first change listed"},
	warnNoFrom: {"no from on the root rs:md",
		"§12.1, §13.1, §13.2, Table 4: from is required on a Change List, a Change Dump, their indexes and a Change Dump Manifest",
		"its span starts at its first dated change"},
	warnUnordered: {"changes out of time order",
		"§12.1, §13.2: entries are in chronological order, the least recently changed first", "applied in time order (of datetime, or of lastmod in a list with no datetime)"},
	warnOutsideSpan: {"change dated outside the document's from and until",
		"§7 datetime: at or after from, and at or before until when given", "ordered by its datetime"},
	warnRepeatedLoc: {"<loc> listed twice",
		"§10.1 (likewise §8, §11.1, §11.2): one <url> per resource", "of a resource, the entry with the latest lastmod kept (of equals, the last); otherwise each entry read as listed"},
	warnCapabilityTwice: {"capability named twice in a Capability List",
		"§9: one entry per capability", "every document named is read"},
	warnNoPath: {"manifest entry without path",
		"§11.2, §13.2: each entry (but a deletion) gives its member's path", "no member used: the resource is read from its URI"},
	warnPrefixedAttr: {"attribute of the standard with a namespace prefix",
		"§7: the attributes of rs:md and rs:ln carry no namespace prefix", "ignored, as another namespace's attribute is"},
	WarnNoCapability: {"document has no rs:md capability",
		"§7: capability is required in every ResourceSync document", "read as a Resource List"},
	WarnEntryNoCapability: {"Capability List entry without capability",
		"§9: each entry's rs:md has a capability", "skipped"},
	WarnUnnamedSet: {"document not named by the document its links lead to",
		"§8: a Source Description names every Capability List; §9: a Capability List names every capability document",
		"read as a set of its own"},
	WarnNotCapabilityList: {"Source Description entry that is not a Capability List",
		"§8: a Source Description's entries are Capability Lists", "skipped"},
	warnPackageAsDump: {"a package named where a dump document belongs",
		"§9, §11.1, §13.1: a Capability List names the Resource Dump or Change Dump document, whose entries are its packages",
		"read as a dump of that one package"},
	warnNoChange: {"change entry without a change attribute",
		"§12.1, §13.2: each entry's rs:md has change (created, updated or deleted)",
		"its resource is asked: created or updated if it answers, deleted if 404 or 410"},
	warnRepeatedMD: {"rs:md twice in one element",
		"§7 Table 2: one rs:md in each <url> or <sitemap>, and one before them at the root", "merged: each attribute either gives is kept"},
	warnConflictingMD: {"an attribute given different values by two rs:md of one element",
		"§7 Table 2: one rs:md in each <url> or <sitemap>, and one before them at the root", "the first value kept"},
	warnInvertedRange: {"completed earlier than at",
		"§7 and Appendix A Table 4: at is when making the document began, completed when it ended", "each kept as given: the document speaks for at"},
}

// PackageAsDump is the warning for a Resource Dump or Change Dump URL that
// serves a package, not a document (DSpace's Capability List names each
// run's changedump_*.zip so): the loader and the follower read it as a
// dump of that one package, and say so with this warning, of the table
// above.
func PackageAsDump(docURL string) Warning {
	return warnPackageAsDump.At(docURL, 0, "")
}

// sitemapEntryLimit is the Sitemap protocol's limit on entries per document.
const sitemapEntryLimit = 50_000

// At returns a warning of kind k about the document at docURL (line 0:
// the document as a whole), with detail after the deviation.
func (k WarnKind) At(docURL string, line int, detail string) Warning {
	spec := warnTable[k]
	msg := spec.msg
	if detail != "" {
		msg += ": " + detail
	}
	return Warning{URL: docURL, Line: line, Msg: msg, Clause: "ResourceSync 1.1 " + spec.clause, Reading: spec.reading}
}

// warnings collects at most one warning per kind (the first met), and
// counts each kind's occurrences.
type warnings struct {
	seen  uint64
	list  []Warning
	kinds []WarnKind // list[i]'s
	n     [warnCount]int
}

func init() {
	if warnCount > 64 {
		panic(fmt.Sprintf("resourcesync: %d warning kinds do not fit warnings.seen", warnCount))
	}
}

func (w *warnings) add(kind WarnKind, docURL string, line int, detail string) {
	w.n[kind]++
	if w.seen&(1<<kind) == 0 {
		w.put(kind, kind.At(docURL, line, detail))
	}
}

// put keeps warning, of kind, unless one of its kind is kept already; it
// counts nothing.
func (w *warnings) put(kind WarnKind, warning Warning) {
	if w.seen&(1<<kind) != 0 {
		return
	}
	w.seen |= 1 << kind
	w.list = append(w.list, warning)
	w.kinds = append(w.kinds, kind)
}

// counted returns the warnings, each with its kind's count so far.
func (w *warnings) counted() []Warning {
	for i, k := range w.kinds {
		w.list[i].Count = max(1, w.n[k])
	}
	return w.list
}
