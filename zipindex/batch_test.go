package zipindex

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadMembersInOneRequest(t *testing.T) {
	var entries []entry
	methods := []uint16{MethodStored, MethodDeflate, MethodZstd}
	for i := range 60 {
		entries = append(entries, entry{name: memberName(i), data: textLike(500+i*37, uint64(i)), method: methods[i%3], raw: i%2 == 0 && methods[i%3] != MethodZstd})
	}
	ps := newPackageServer(t, buildZip(t, entries))
	p, err := ps.open(t, Options{})
	require.NoError(t, err)
	var ms []*Member
	for i := 50; i >= 10; i-- { // any order
		m, ok := p.Lookup(memberName(i))
		require.True(t, ok)
		ms = append(ms, m)
	}
	before := ps.requests.Load()
	got, errs := p.ReadMembers(context.Background(), ms)
	assert.Equal(t, int64(1), ps.requests.Load()-before, "one range request for the run")
	for k, m := range ms {
		require.NoError(t, errs[k], m.Name)
		var i int
		for j := range entries {
			if entries[j].name == m.Name {
				i = j
			}
		}
		assert.Equal(t, entries[i].data, got[k], m.Name)
	}
	// The data offsets are learnt: a later Reader needs no header request.
	before = ps.requests.Load()
	b, err := readMember(t, p, ms[0].Name, 0, ms[0].Size)
	require.NoError(t, err)
	assert.Equal(t, got[0], b)
	assert.Equal(t, int64(1), ps.requests.Load()-before)
}

func TestReadMembersCatchesABadMember(t *testing.T) {
	entries := []entry{
		{name: memberName(0), data: textLike(900, 1), method: MethodStored, raw: true},
		{name: memberName(1), data: textLike(900, 2), method: MethodStored, raw: true},
		{name: memberName(2), data: textLike(900, 3), method: MethodDeflate, raw: true},
	}
	data := buildZip(t, entries)
	// Flip a data byte of member 1 (stored): its CRC-32 no longer matches.
	at := localEntry(t, data, memberName(1)) + localHeaderLen + len(memberName(1)) + 10
	data[at] ^= 0xff
	ps := newPackageServer(t, data)
	p, err := ps.open(t, Options{})
	require.NoError(t, err)
	var ms []*Member
	for i := range 3 {
		m, _ := p.Lookup(memberName(i))
		ms = append(ms, m)
	}
	got, errs := p.ReadMembers(context.Background(), ms)
	require.NoError(t, errs[0])
	assert.Equal(t, entries[0].data, got[0])
	assert.ErrorIs(t, errs[1], ErrCorrupt)
	assert.Nil(t, got[1], "no bytes for a bad member")
	require.NoError(t, errs[2])
	assert.Equal(t, entries[2].data, got[2])
}

// Wanted members far apart are read without the members between them
// (issue 23: reading 6 files of 11 KB fetched 4.59 MB): in one multi-range
// request where the server serves several ranges in one answer, else with
// a request each. Members a small gap apart still share one request.
func TestReadMembersSkipsWhatIsNotWanted(t *testing.T) {
	var entries []entry
	for i := range 400 {
		entries = append(entries, entry{name: memberName(i), data: textLike(11000, uint64(i)), method: MethodStored, raw: true})
	}
	ps := newPackageServer(t, buildZip(t, entries))
	p, err := ps.open(t, Options{})
	require.NoError(t, err)
	lookup := func(is ...int) []*Member {
		var ms []*Member
		for _, i := range is {
			m, ok := p.Lookup(memberName(i))
			require.True(t, ok)
			ms = append(ms, m)
		}
		return ms
	}
	read := func(ms []*Member) {
		t.Helper()
		got, errs := p.ReadMembers(context.Background(), ms)
		for k, m := range ms {
			require.NoError(t, errs[k], m.Name)
			for j := range entries {
				if entries[j].name == m.Name {
					assert.Equal(t, entries[j].data, got[k], m.Name)
				}
			}
		}
	}

	far := lookup(3, 70, 140, 210, 280, 350)
	var want int64
	for _, m := range far {
		want += m.CompressedSize
	}
	reqs, sent := ps.requests.Load(), ps.sent.Load()
	read(far)
	assert.Equal(t, int64(1), ps.requests.Load()-reqs, "one multi-range request")
	assert.Less(t, ps.sent.Load()-sent, want*5/4, "bytes fetched over the members' own")

	// Every other member: one request, whichever way it is read.
	near := lookup(100, 102, 104, 106, 108, 110)
	reqs = ps.requests.Load()
	read(near)
	assert.Equal(t, int64(1), ps.requests.Load()-reqs, "one request for close members")

	// A server that answers several ranges whole: each failed try costs a
	// request, then the runs are read one by one; after two failures the
	// package stops trying.
	ps.noMulti.Store(true)
	for try := range 3 {
		reqs = ps.requests.Load()
		read(far)
		extra := int64(1)
		if try >= multiRangeGiveUp {
			extra = 0
		}
		assert.Equal(t, int64(len(far))+extra, ps.requests.Load()-reqs, "try %d: a request per member far from the others", try)
	}
	// Without multi-range, gaps up to MaxBatchGap are read through.
	reqs = ps.requests.Load()
	read(near)
	assert.Equal(t, int64(1), ps.requests.Load()-reqs, "one range across small gaps")
}
