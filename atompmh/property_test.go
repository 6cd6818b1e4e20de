package atompmh_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"rsfs/atompmh"
	"rsfs/tests/atomsource"
)

// TestRandomMutationsKeepThePoolInStep runs random creations, updates
// and deletions against the producer, harvesting after a random number of
// them. After every harvest the pool equals the producer's, and the
// changes the harvest lists, applied to the pool before it as a consumer
// applies them, give the same pool.
func TestRandomMutationsKeepThePoolInStep(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 42))
			complete := seed%4 == 3
			src := atomsource.Start(atomsource.Config{Complete: complete, PerDocument: 1 + rng.IntN(6)})
			defer src.Close()
			h, st := newHarvester(), atompmh.NewState()
			applied := map[string][]string{} // the pool as rebuilt from changes
			var live []string
			next := 0
			for range 15 {
				for range rng.IntN(8) {
					live, next = mutate(t, rng, src, live, next)
				}
				res := harvest(t, h, src, st)
				if res.NotModified {
					continue
				}
				for _, c := range res.Changes {
					if c.Op == atompmh.OpDelete {
						delete(applied, c.ID)
						continue
					}
					var reps []string
					for _, l := range c.Entry.Links {
						reps = append(reps, l.Type+" "+l.Href)
					}
					slices.Sort(reps)
					applied[c.ID] = reps
				}
				assertPool(t, st, src)
				want := src.Pool()
				if len(applied) != len(want) {
					t.Fatalf("changes rebuild %d records, the producer has %d", len(applied), len(want))
				}
				for id, reps := range want {
					if !slices.Equal(applied[id], reps) {
						t.Fatalf("record %s from the changes: %v, producer %v", id, applied[id], reps)
					}
				}
				if !res.Whole {
					t.Fatalf("harvest not whole: %v", res.Warnings)
				}
			}
		})
	}
}

var formats = []atomsource.Rep{
	{Type: "application/atom+xml", Ext: "atom"},
	{Type: "application/rdf+xml", Ext: "rdf"},
	{Type: "application/rifcs+xml", Ext: "rifcs"},
	{Type: "application/xhtml+xml", Ext: "html"},
}

// mutate makes one random change: a creation, or an update (a random set
// of formats) or deletion of a live record.
func mutate(t *testing.T, rng *rand.Rand, src *atomsource.Source, live []string, next int) ([]string, int) {
	t.Helper()
	reps := func(name string) []atomsource.Rep {
		var out []atomsource.Rep
		for _, f := range formats {
			if rng.IntN(2) == 0 {
				f.Body = []byte(name + " as " + f.Ext)
				out = append(out, f)
			}
		}
		if len(out) == 0 {
			out = append(out, atomsource.Rep{Type: "text/plain", Ext: "txt", Body: []byte(name)})
		}
		return out
	}
	var err error
	switch op := rng.IntN(3); {
	case op == 0 || len(live) == 0:
		name := fmt.Sprintf("n%04d", next)
		next++
		live = append(live, name)
		err = src.Create(name, "Record "+name, reps(name)...)
	case op == 1:
		name := live[rng.IntN(len(live))]
		err = src.Update(name, "Record "+name+" again", reps(name)...)
	default:
		i := rng.IntN(len(live))
		err = src.Delete(live[i])
		live = slices.Delete(live, i, i+1)
	}
	if err != nil {
		t.Fatal(err)
	}
	return live, next
}
