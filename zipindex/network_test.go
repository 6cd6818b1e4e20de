package zipindex

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/fetch"
)

// networkReader is a package reader with a network of the given bytes
// per round trip and requests in flight; it reads a range in one request,
// never several in one.
type networkReader struct {
	r        *fetch.ReaderAt
	perTrip  int64
	inFlight int
}

func (n *networkReader) ReadAt(p []byte, off int64) (int, error) { return n.r.ReadAt(p, off) }
func (n *networkReader) ReadRange(ctx context.Context, off, size int64) (io.ReadCloser, error) {
	return n.r.ReadRange(ctx, off, size)
}
func (n *networkReader) BytesPerRoundTrip() int64 { return n.perTrip }
func (n *networkReader) InFlight() int            { return n.inFlight }

// The gap read through to join members into one request is a round trip's
// bytes where the reader measures its network: members 200 KiB apart are
// one request on a network that carries 1 MiB a round trip (the gap then
// MaxNetworkGap), three where it carries less than the gaps, and three
// where nothing is measured yet (MaxBatchGap).
func TestReadMembersGapFollowsTheNetwork(t *testing.T) {
	var entries []entry
	for i := range 100 {
		entries = append(entries, entry{name: memberName(i), data: textLike(11000, uint64(i)), method: MethodStored, raw: true})
	}
	ps := newPackageServer(t, buildZip(t, entries))
	c := fetch.New(fetch.Options{CredentialOrigin: ps.srv.URL, Retries: -1})
	ra := fetch.NewReaderAt(context.Background(), c, ps.url(), int64(len(ps.data)), ps.etag)
	for _, tc := range []struct {
		perTrip int64
		want    int64
	}{{1 << 20, 1}, {100 << 10, 3}, {0, 3}} {
		nr := &networkReader{r: ra, perTrip: tc.perTrip, inFlight: 16}
		p, err := Open(context.Background(), nr, int64(len(ps.data)), ps.url(), Options{})
		require.NoError(t, err)
		var ms []*Member
		for _, i := range []int{0, 20, 40} {
			m, ok := p.Lookup(memberName(i))
			require.True(t, ok)
			ms = append(ms, m)
		}
		reqs := ps.requests.Load()
		got, errs := p.ReadMembers(context.Background(), ms)
		for k, i := range []int{0, 20, 40} {
			require.NoError(t, errs[k])
			assert.Equal(t, entries[i].data, got[k])
		}
		assert.Equal(t, tc.want, ps.requests.Load()-reqs, "requests with %d bytes a round trip", tc.perTrip)
	}
}
