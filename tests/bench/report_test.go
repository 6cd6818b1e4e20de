package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The tool owns only its marked blocks of BENCHMARKS.md: the how-to-run
// block under the title, and one section per mode, replaced in place.
func TestUpsertSectionKeepsTheRest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	orig := "# rsfs benchmarks\n\nIntro.\n\n## Run B\n\nold table\n"
	if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) string {
		t.Helper()
		if err := upsertSection(path, name, content); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	write("peer x", "## Peer run\n\nfirst\n")
	write("run y", "## Run\n\nclassic\n")
	got := write("peer x", "## Peer run\n\nsecond\n")

	for _, want := range []string{"Intro.", "## Run B\n\nold table", "second", "classic", howToRun} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "first") {
		t.Errorf("the old peer section stayed:\n%s", got)
	}
	for _, marker := range []string{"how to run", "peer x", "run y"} {
		begin, end := blockMarkers(marker)
		if strings.Count(got, begin) != 1 || strings.Count(got, end) != 1 {
			t.Errorf("block %q is not there exactly once:\n%s", marker, got)
		}
	}
	order := []string{"# rsfs benchmarks", "How to run", "Intro.", "## Run\n", "## Peer run", "## Run B"}
	last := -1
	for _, s := range order {
		i := strings.Index(got, s)
		if i < last {
			t.Errorf("%q out of order in:\n%s", s, got)
		}
		last = i
	}
}

// The overlap reference is the slower of the wire and the hash, by median,
// and a failed reference gives no figure rather than the other one.
func TestSlowerOfTakesTheSlowerMedian(t *testing.T) {
	p := &peerBench{refs: map[string][]sample{
		"wire": {{secs: 0.2}, {secs: 0.3}, {secs: 0.25}},
		"hash": {{secs: 0.5}, {secs: 0.4}, {secs: 0.45}},
		"bad":  {{secs: 0.1}, {err: "exit status 1"}},
	}}
	got, ok := p.refSummary(slowerOf("wire", "hash"), mCatFirst)
	if !ok || got.secs != 0.45 {
		t.Errorf("slower of wire and hash = %+v, %v; want 0.45 s", got, ok)
	}
	got, ok = p.refSummary(slowerOf("hash", "wire"), mCatFirst)
	if !ok || got.secs != 0.45 {
		t.Errorf("slower of hash and wire = %+v, %v; want 0.45 s", got, ok)
	}
	got, ok = p.refSummary(slowerOf("wire", "bad"), mCatFirst)
	if !ok || got.err == "" {
		t.Errorf("with a failed reference = %+v, %v; want the failure", got, ok)
	}
	if _, ok := p.refSummary(slowerOf("wire", "missing"), mCatFirst); ok {
		t.Error("a missing reference gave a figure")
	}
}

// The cores' floor is the parts' whole-machine CPU spread over the cores,
// unless one part alone takes longer; each part counts by its least
// sample; a client's part is its figure for the measure; a failed or
// missing part gives no figure.
func TestCoresFloorSpreadsThePartsCPUOverTheCores(t *testing.T) {
	p := &peerBench{cores: 2,
		refs: map[string][]sample{
			"wire": {{secs: 0.2, busy: 0.3}, {secs: 0.2, busy: 0.25}, {secs: 0.2, busy: 0.2}},
			"hash": {{secs: 0.3, busy: 0.3}},
			"bad":  {{err: "exit status 1"}},
		},
		times: map[string]map[string][]sample{"fuse": {mCatFirst: {{secs: 0.25, busy: 0.25}}}},
	}
	got, ok := p.refSummary(coresFloor("wire", "hash", "client:fuse"), mCatFirst)
	if want := (0.2 + 0.3 + 0.25) / 2; !ok || got.secs != want || got.busy != 0.2+0.3+0.25 {
		t.Errorf("floor = %+v, %v; want %.3f s from the wire's least 0.2 s, 0.3 s and 0.25 s of CPU on 2 cores", got, ok, want)
	}
	p.refs["hash"] = []sample{{secs: 0.7, busy: 0.7}}
	got, _ = p.refSummary(coresFloor("wire", "hash", "client:fuse"), mCatFirst)
	if got.secs != 0.7 {
		t.Errorf("floor with a part slower than the spread = %.2f s; want that part's 0.70 s", got.secs)
	}
	if got, ok := p.refSummary(coresFloor("wire", "bad"), mCatFirst); !ok || got.err == "" {
		t.Errorf("with a failed part = %+v, %v; want the failure", got, ok)
	}
	if _, ok := p.refSummary(coresFloor("wire", "missing"), mCatFirst); ok {
		t.Error("a missing part gave a figure")
	}
}
