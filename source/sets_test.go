package source

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/fetch"
	"rsfs/resourcesync"
)

// The sets are the Source's own: a follower adopting a re-read Capability
// List's documents, or other sets, while loads, status and snapshots read
// them, goes through its methods and its lock (run with -race), and what
// a reader got is a copy the adopting does not change.
func TestSetsAreReadAndReplacedUnderTheSourcesLock(t *testing.T) {
	s := newSource("http://example.com", fetch.ReasonSource, Options{Client: fetch.New(fetch.Options{})})
	set := &Set{URL: "http://example.com/caps.xml", Docs: map[resourcesync.Capability][]string{
		resourcesync.CapChangeList: {"http://example.com/cl1.xml"}}}
	s.sets = []*Set{set}
	lists := s.Docs(set, resourcesync.CapChangeList)

	var wg sync.WaitGroup
	wg.Add(3)
	go func() { // a poll reading the set's documents
		defer wg.Done()
		for i := 0; i < 200; i++ {
			_ = s.Docs(set, resourcesync.CapChangeList)
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			fresh := &Set{URL: set.URL, Docs: map[resourcesync.Capability][]string{
				resourcesync.CapChangeList: {"http://example.com/cl2.xml"}}}
			s.AdoptDocs(set, fresh)
			s.ReplaceDocs(set, resourcesync.CapChangeDump, []string{"http://example.com/cd.xml"})
			s.ReplaceSets([]*Set{set})
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ { // status and snapshots
			for _, x := range s.Sets() {
				_ = s.SetNumber(x)
				_ = s.Hubs(x)
			}
			_, err := json.Marshal(s.State(nil))
			require.NoError(t, err)
		}
	}()
	wg.Wait()
	assert.Equal(t, []string{"http://example.com/cl1.xml"}, lists, "a copy, not the set's own slice")
	assert.Equal(t, []string{"http://example.com/cl2.xml"}, s.Docs(set, resourcesync.CapChangeList))
	assert.Equal(t, uint16(1), s.SetNumber(set))
}

// A set's key (the positions a snapshot keeps are keyed by it) is its
// Capability List's URL; the implicit set's is its first Resource List,
// and a set of documents no Capability List names that has no Resource
// List (a Resource Dump given as the URL) still has one, where indexing
// its Resource Lists panicked.
func TestSetKey(t *testing.T) {
	s := newSource("http://example.com", fetch.ReasonSource, Options{Client: fetch.New(fetch.Options{})})
	capList := &Set{URL: "http://example.com/caps.xml", Docs: map[resourcesync.Capability][]string{
		resourcesync.CapResourceList: {"http://example.com/rl.xml"}}}
	implicit := &Set{Docs: map[resourcesync.Capability][]string{
		resourcesync.CapChangeList:   {"http://example.com/cl.xml"},
		resourcesync.CapResourceList: {"http://example.com/rl1.xml", "http://example.com/rl2.xml"}}}
	dumpOnly := &Set{Docs: map[resourcesync.Capability][]string{
		resourcesync.CapResourceDump: {"http://example.com/rd.xml"}}}
	assert.Equal(t, "http://example.com/caps.xml", s.SetKey(capList))
	assert.Equal(t, "http://example.com/rl1.xml", s.SetKey(implicit))
	assert.Equal(t, "http://example.com/rd.xml", s.SetKey(dumpOnly))
	assert.Empty(t, s.SetKey(&Set{}))
}
