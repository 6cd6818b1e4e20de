package atomfeed

import (
	"fmt"
	"slices"

	"rsfs/atompmh"
	"rsfs/catalog"
	"rsfs/origin"
)

// applyRecord makes the catalog hold what one record's change says: the
// representations of its new entry whose size is known (upserted), none of
// the URIs it held before that the entry no longer names (removed). A
// representation whose size could not be learned (other than 404 or 410)
// keeps what the catalog had and the record is retried at the next poll.
func (fl *Tree) applyRecord(c atompmh.Change, sizes map[string]sizeOf) ([]catalog.Effect, error) {
	var want []*catalog.Resource
	var keep []string // URIs to keep as they are: their size is not known now
	if c.Entry != nil {
		want, keep = fl.resources(c.Entry, sizes)
	}
	var effects []catalog.Effect
	named := map[string]bool{}
	for _, r := range want {
		named[r.URI] = true
	}
	for _, u := range keep {
		named[u] = true
	}
	for _, u := range fl.held[c.ID] {
		if !named[u] && fl.owner[u] == c.ID {
			effects = append(effects, fl.cat.Remove(u)...)
			delete(fl.owner, u)
			delete(fl.sizes, u)
		}
	}
	held := slices.Clone(keep)
	for _, r := range want {
		if o, ok := fl.owner[r.URI]; ok && o != c.ID {
			fl.f.log.Warn("two records name the same representation; the newer one holds it",
				"uri", r.URI, "record", c.ID, "other", o)
		}
		eff, err := fl.cat.TryUpsert(r)
		if err != nil {
			fl.held[c.ID] = held
			return effects, fmt.Errorf("record %s: %s: %w", c.ID, r.URI, err)
		}
		effects = append(effects, eff...)
		fl.owner[r.URI] = c.ID
		fl.sizes[r.URI] = r.Length
		held = append(held, r.URI)
	}
	if len(held) == 0 {
		delete(fl.held, c.ID)
	} else {
		fl.held[c.ID] = held
	}
	return effects, nil
}

// resources are an entry's representations as catalog resources, one per
// distinct alternate URI whose size is known; keep are the URIs it held
// whose size could not be learned this time (they stay as they were).
func (fl *Tree) resources(e *atompmh.Entry, sizes map[string]sizeOf) (want []*catalog.Resource, keep []string) {
	props := recordProps(e)
	links := recordLinks(e)
	seen := map[string]bool{}
	for _, l := range e.Links {
		if seen[l.Href] {
			continue
		}
		seen[l.Href] = true
		s := sizes[l.Href]
		switch {
		case s.gone:
			fl.f.log.Info("representation gone (404/410): not mounted", "record", e.ID, "uri", l.Href)
		case s.err != nil:
			if fl.owner[l.Href] == e.ID {
				keep = append(keep, l.Href)
			}
			if !isNotAllowed(s.err) {
				fl.retry[e.ID] = true
				fl.f.log.Warn("representation's size could not be learned; not shown until a later poll learns it",
					"record", e.ID, "uri", l.Href, "err", s.err)
			}
		default:
			want = append(want, &catalog.Resource{URI: l.Href, Length: s.length, Lastmod: e.Updated, Type: l.Type, Props: props, Links: links})
		}
	}
	return want, keep
}

// recordProps are the properties every representation of a record has.
func recordProps(e *atompmh.Entry) []catalog.Property {
	return []catalog.Property{{Name: "id", Value: e.ID}, {Name: "title", Value: e.Title}}
}

// recordLinks are the links every representation of a record has: the
// entry's links other than alternate (those are the representations), as
// catalog links, which the file system shows as user.atompmh.link.<rel>.
func recordLinks(e *atompmh.Entry) []catalog.Link {
	if len(e.Related) == 0 {
		return nil
	}
	out := make([]catalog.Link, len(e.Related))
	for i, l := range e.Related {
		out[i] = catalog.Link{Rel: l.Rel, Href: l.Href, Type: l.Type, Length: l.Length}
	}
	return out
}

// originOr is the origin of a URI, or the URI when it has none.
func originOr(uri string) string {
	if o, err := origin.Of(uri); err == nil {
		return o
	}
	return uri
}
