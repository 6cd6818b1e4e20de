package catalog

import (
	"time"

	"rsfs/resourcesync"
)

// Version is what can be told of whether two records of a resource are
// the same version (CompareVersion).
type Version int

const (
	// VersionOther: they differ (a common hash, the lastmods or the
	// lengths disagree, or only one of them has a lastmod).
	VersionOther Version = iota
	// VersionSame: a hash both publish with the same algorithm agrees,
	// else the lastmods agree (and the lengths, where both give one).
	VersionSame
	// VersionUnknown: neither gives a lastmod nor a hash the other gives,
	// and the lengths do not disagree: nothing tells them apart.
	VersionUnknown
)

// CompareVersion tells whether r is the version that hashes, lastmod and
// length describe. It is the one rule of "the same version": what needs
// the same version to act (a dump copy attached as an origin, a doubt the
// catalog already holds, a re-read Resource List's entry the catalog
// already has) asks SameVersion, which takes VersionUnknown for another
// version, so rsfs reads again rather than serve or keep what may differ;
// what reports a difference (audit's and drift repair's Compare) reports
// only VersionOther, since an unknown is no evidence of drift.
func CompareVersion(r *Resource, hashes []resourcesync.Hash, lastmod time.Time, length int64) Version {
	for _, a := range r.Hashes {
		for _, b := range hashes {
			if a.Alg == b.Alg {
				if a.Value == b.Value {
					return VersionSame
				}
				return VersionOther
			}
		}
	}
	if r.Length >= 0 && length >= 0 && r.Length != length {
		return VersionOther
	}
	switch {
	case r.Lastmod.IsZero() && lastmod.IsZero():
		return VersionUnknown
	case r.Lastmod.IsZero() || lastmod.IsZero() || !r.Lastmod.Equal(lastmod):
		return VersionOther
	}
	return VersionSame
}

// SameVersion reports whether r is known to be the version that hashes,
// lastmod and length describe (CompareVersion says VersionSame).
func SameVersion(r *Resource, hashes []resourcesync.Hash, lastmod time.Time, length int64) bool {
	return CompareVersion(r, hashes, lastmod, length) == VersionSame
}
