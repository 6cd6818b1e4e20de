package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/tests/publishers"
)

// A Source that publishes only Change Lists (resydes' test Sources, the NII
// NRID-style change lists, Kanazawa Bunko's test set) mounts: the tree holds
// every resource whose latest change is a creation or an update, following
// works as ever, and rsfs status and rsfs inspect say there is no baseline.
func TestChangeListsAloneAreASource(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ style, entry string }{
		{"nii", "/"},                           // the Source Description at the well-known URI
		{"nii", "/rs/changelist.xml"},          // the Change List given as the URL
		{"kanazawa", "/rs/capabilitylist.xml"}, // two rs:md per entry, a Change List Index
	} {
		t.Run(c.style+c.entry, func(t *testing.T) {
			p, err := publishers.NewChangeLists(c.style, 12)
			require.NoError(t, err)
			t.Cleanup(p.Close)
			require.Len(t, p.State(), 11, "12 created, the last deleted")
			m := mount(t, p.URL()+c.entry, "--poll-interval", pubPoll.String())
			pubSameTree(t, m, p.State, "every resource the Change List says exists")
			_, err = os.Stat(m.path("items/0011.xml"))
			assert.ErrorIs(t, err, os.ErrNotExist, "a resource whose latest change is a deletion is not in the tree")

			out, stderr, err := run(t, 10*time.Second, rsfsBin, "status", m.dir)
			require.NoError(t, err, stderr)
			assert.Contains(t, out, "no baseline: the set publishes no Resource List or Resource Dump; the tree holds only what its Change Lists name")
			st := readStatus(t, m.dir)
			require.Len(t, st.Sets, 1)
			assert.True(t, st.Sets[0].NoBaseline, "status --json: no_baseline")
			out, stderr, err = run(t, time.Minute, rsfsBin, "inspect", p.URL()+c.entry)
			require.NoError(t, err, stderr)
			assert.Contains(t, out, "no baseline: the set publishes no Resource List or Resource Dump")
			log, err := os.ReadFile(m.logFile)
			require.NoError(t, err)
			assert.Contains(t, string(log), "no baseline: the Source publishes no Resource List or Resource Dump, only Change Lists")
			if c.style == "kanazawa" {
				assert.Contains(t, string(log), "rs:md twice in one element", "the merge is warned of")
				assert.NotContains(t, string(log), "different values", "the two rs:md do not conflict")
			}

			p.Create("/items/new.xml", []byte("<new/>\n"))
			p.Update("/items/0001.xml", []byte("<updated/>\n"))
			p.Delete("/items/0002.xml")
			pubSameTree(t, m, p.State, "a creation, an update and a deletion followed")
			require.False(t, strings.Contains(strings.Join(p.Paths(), " "), "0002"))
		})
	}
}

// The CDIF discovery profile's example: two top-level rs:md in each
// document, merged with a warning, where each was refused.
func TestTwoTopLevelMDAreMerged(t *testing.T) {
	t.Parallel()
	c, err := publishers.NewCDIF(5)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	m := mount(t, c.URL()+"/", "--poll-interval", "0")
	pubSameTree(t, m, c.State, "the CDIF datasets")
	log, err := os.ReadFile(m.logFile)
	require.NoError(t, err)
	assert.Contains(t, string(log), "tolerated: rs:md twice in one element")
	assert.Contains(t, string(log), "§7 Table 2")
}
