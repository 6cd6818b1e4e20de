package resourcesync

// warnKind is a kind of tolerated deviation. Each is reported once per
// document.
type warnKind uint8

const (
	warnNoZone warnKind = iota
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
	warnNoChange
	warnCount
)

var warnMessages = [warnCount]string{
	warnNoZone:                "datetime without time zone; UTC assumed",
	warnSpaceSeparator:        "datetime with a space instead of T",
	warnBase64Hash:            "base64 hash value; converted to hex",
	warnHashForm:              "hash value neither hex nor base64 of the algorithm's size; kept as published",
	warnMDBeforeLoc:           "rs:md before <loc>",
	warnLeadingSpace:          "whitespace before the XML declaration",
	warnUnknownCapability:     "unknown capability",
	warnUnknownChange:         "unknown change value",
	warnManyEntries:           "more than 50,000 entries (the Sitemap limit)",
	warnHeaderAfterEntries:    "root rs:md or rs:ln after the first entry; ignored",
	warnBadURL:                "URL that cannot be parsed; kept as published",
	warnNonStandardCapability: "non-standard capability name",
	warnUserinfo:              "userinfo removed from a URL (credentials in a document are never sent); host",
	warnNoChange:              "change entry without a change attribute (1.1 §12.1 and §13.2 require one); its resource is asked: created or updated if it answers, deleted if 404 or 410",
}

// sitemapEntryLimit is the Sitemap protocol's limit on entries per document.
const sitemapEntryLimit = 50_000

// warnings collects at most one warning per kind.
type warnings struct {
	seen uint32
	list []Warning
}

func (w *warnings) add(kind warnKind, docURL string, line int, detail string) {
	if w.seen&(1<<kind) != 0 {
		return
	}
	w.seen |= 1 << kind
	msg := warnMessages[kind]
	if detail != "" {
		msg += ": " + detail
	}
	w.list = append(w.list, Warning{URL: docURL, Line: line, Msg: msg})
}
