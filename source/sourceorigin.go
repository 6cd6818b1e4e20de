package source

import "rsfs/resourcesync"

// The levels of the URLs the Source's documents name, most telling first:
// where its Source Description is, where its Capability Lists are, where
// the documents they name are.
const (
	levelDescription = iota
	levelCapabilityList
	levelDocument
	levels
)

func levelOf(c resourcesync.Capability) int {
	switch c {
	case resourcesync.CapDescription:
		return levelDescription
	case resourcesync.CapCapabilityList:
		return levelCapabilityList
	}
	return levelDocument
}

// originVotes counts the origins of the URLs the Source's documents name,
// per level. The Source's origin is where its documents live, not how the
// user spelled the URL: http://localhost:8080/ for a Source whose documents
// say http://127.0.0.1:8080/ is the Source at 127.0.0.1:8080.
type originVotes [levels]struct {
	counts map[string]int
	order  []string
}

func (v *originVotes) add(level int, u string) {
	o := originOfString(u)
	if o == "" || o == "://" {
		return
	}
	l := &v[level]
	if l.counts == nil {
		l.counts = map[string]int{}
	}
	if l.counts[o] == 0 {
		l.order = append(l.order, o)
	}
	l.counts[o]++
}

// origin returns the origin most named at the most telling level that has
// any; on a tie the given origin if it is among the first, else the one
// named first; the given origin when the documents name none.
func (v *originVotes) origin(given string) string {
	for _, l := range v {
		best, n := "", 0
		for _, o := range l.order {
			if c := l.counts[o]; c > n || (c == n && o == given) {
				best, n = o, c
			}
		}
		if best != "" {
			return best
		}
	}
	return given
}
