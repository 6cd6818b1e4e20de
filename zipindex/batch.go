package zipindex

import (
	"bytes"
	"context"
	"hash/crc32"
	"io"
	"slices"
	"sync"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zstd"
)

// MaxBatchBytes bounds the span of a package that ReadMembers reads in one
// request.
const MaxBatchBytes = 8 << 20

// MaxBatchGap is the most bytes of members not asked for that ReadMembers
// reads to join two wanted members into one request, where the package's
// reader does not measure its network: a gap this small costs less than
// another round trip (64 KiB is 5 ms at 100 Mbit/s, well under the round
// trip to a distant Source). A larger gap starts a new request. A reader
// that measures its network (NetworkReader) has the bytes of one round
// trip as the gap instead, within [MinNetworkGap, MaxNetworkGap].
const MaxBatchGap = 64 << 10

// The bounds of a gap derived from the network: at most 256 KiB, so that
// the bytes read through stay near the members' own on a fast network.
const (
	MinNetworkGap = 16 << 10
	MaxNetworkGap = 256 << 10
)

// NetworkReader is a package reader that measures its network, as
// fetch.ReaderAt does: the bytes it receives in the time of a round trip
// (0 until measured), and the requests worth having in flight to its host
// (more over HTTP/2).
type NetworkReader interface {
	BytesPerRoundTrip() int64
	InFlight() int
}

// MaxRunsAtOnce bounds the requests of one ReadMembers call made at once
// on a NetworkReader: a quarter of its InFlight, so the packages a batch
// reads at once share them, and at least BatchRunsAtOnce.
const MaxRunsAtOnce = 32

// BatchRunsAtOnce is how many requests of one ReadMembers call are made at
// once, so a batch of several runs costs about one round trip, not one per
// run.
const BatchRunsAtOnce = 4

// MultiRangeGap replaces MaxBatchGap when the package's reader can ask for
// several ranges in one request (MultiRangeReader): another range then costs
// a part header of about 100 bytes rather than a round trip, so only gaps
// smaller than that are read through.
const MultiRangeGap = 256

// MaxRangesPerRequest bounds the ranges of one multi-range request (its
// Range header stays within about 4 KiB, under the 8 KiB a server such as
// nginx takes by default), and MaxMultiRangeBytes the bytes it asks for.
const (
	MaxRangesPerRequest = 160
	MaxMultiRangeBytes  = 16 << 20
)

// MultiRangeReader is a package reader that reads several ranges
// ([offset, length] pairs, sorted, not overlapping) in one request;
// fetch.ReaderAt is one. An error (the server answers whole, say) makes
// ReadMembers read those ranges one request each.
type MultiRangeReader interface {
	ReadRanges(ctx context.Context, spans [][2]int64) ([][]byte, error)
}

// multiRangeGiveUp: after this many failed multi-range requests a package
// reads its runs one request each.
const multiRangeGiveUp = 2

// ReadMembers reads whole members with as few requests as their layout
// allows: wanted members that lie next to each other in the package (or
// apart by at most a gap of other members: MaxBatchGap bytes, or a round
// trip's on a NetworkReader) are read with one
// range request for the run, then each is checked (local header, size,
// CRC-32) and decoded in memory. It returns each member's bytes, or its
// error; a run ends where its span would exceed MaxBatchBytes. Where the
// package's reader is a MultiRangeReader, runs are cut at gaps over
// MultiRangeGap instead and up to MaxRangesPerRequest of them are asked for
// in one request, so members scattered through the package cost few round
// trips and few bytes besides their own. Up to BatchRunsAtOnce requests
// are made at once (more on a NetworkReader whose host speaks HTTP/2).
func (p *Package) ReadMembers(ctx context.Context, ms []*Member) ([][]byte, []error) {
	out, errs := make([][]byte, len(ms)), make([]error, len(ms))
	order := make([]int, len(ms))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmpInt64(ms[a].HeaderOffset, ms[b].HeaderOffset) })
	mr, multi := p.r.(MultiRangeReader)
	multi = multi && p.multiFailures.Load() < multiRangeGiveUp
	gap, atOnce := p.batchSizes()
	if multi {
		gap = MultiRangeGap
	}
	var runs [][]int
	for len(order) > 0 {
		var run []int
		run, order = p.nextRun(ms, order, gap)
		runs = append(runs, run)
	}
	sem := make(chan struct{}, atOnce)
	var wg sync.WaitGroup
	for len(runs) > 0 {
		n, size := 1, int64(0)
		if multi {
			for n < len(runs) && n < MaxRangesPerRequest {
				start, end, ok := p.runSpan(ms, runs[n])
				if !ok || size+end-start > MaxMultiRangeBytes {
					break
				}
				size += end - start
				n++
			}
		}
		group := runs[:n]
		runs = runs[n:]
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if len(group) > 1 && p.readRunsMulti(ctx, mr, ms, group, out, errs) {
				return
			}
			for _, run := range group {
				p.readRun(ctx, ms, run, out, errs) // each run writes only its own indexes
			}
		})
	}
	wg.Wait()
	return out, errs
}

// batchSizes is the gap ReadMembers reads through and the requests it
// makes at once: from the reader's network where it measures it, else
// MaxBatchGap and BatchRunsAtOnce.
func (p *Package) batchSizes() (gap int64, atOnce int) {
	gap, atOnce = MaxBatchGap, BatchRunsAtOnce
	nr, ok := p.r.(NetworkReader)
	if !ok {
		return gap, atOnce
	}
	if b := nr.BytesPerRoundTrip(); b > 0 {
		gap = min(max(b, MinNetworkGap), MaxNetworkGap)
	}
	return gap, min(max(nr.InFlight()/4, BatchRunsAtOnce), MaxRunsAtOnce)
}

// runSpan is the bytes of the package a run covers: from its first
// member's header to where the member after its last one starts.
func (p *Package) runSpan(ms []*Member, run []int) (start, end int64, ok bool) {
	li, ok := p.index(ms[run[len(run)-1]])
	if !ok {
		return 0, 0, false
	}
	return ms[run[0]].HeaderOffset, p.limits[li], true
}

// readRunsMulti reads runs with one multi-range request and cuts their
// members out of it. It reports false, having stored nothing, when the
// request failed: the caller then reads the runs one by one.
func (p *Package) readRunsMulti(ctx context.Context, mr MultiRangeReader, ms []*Member, runs [][]int, out [][]byte, errs []error) bool {
	spans := make([][2]int64, len(runs))
	for j, run := range runs {
		start, end, ok := p.runSpan(ms, run)
		if !ok {
			return false
		}
		spans[j] = [2]int64{start, end - start}
	}
	datas, err := mr.ReadRanges(ctx, spans)
	if err != nil || len(datas) != len(spans) {
		if ctx.Err() == nil {
			p.multiFailures.Add(1)
		}
		return false
	}
	for j, run := range runs {
		for _, k := range run {
			out[k], errs[k] = p.cutMember(ms[k], datas[j], spans[j][0])
		}
	}
	return true
}

// nextRun takes the longest prefix of order (sorted by offset) in which each
// member starts at most gap bytes after the previous one ends, and whose
// span stays within MaxBatchBytes.
func (p *Package) nextRun(ms []*Member, order []int, gap int64) (run, rest []int) {
	i, ok := p.index(ms[order[0]])
	if !ok {
		return order[:1], order[1:]
	}
	start, prevEnd := ms[order[0]].HeaderOffset, p.limits[i]
	n := 1
	for n < len(order) {
		m := ms[order[n]]
		i, ok := p.index(m)
		if !ok || m.HeaderOffset-prevEnd > gap || p.limits[i]-start > MaxBatchBytes {
			break
		}
		prevEnd = max(prevEnd, p.limits[i])
		n++
	}
	return order[:n], order[n:]
}

// readRun reads the span from the first member's header to the last one's
// limit, and cuts every member of the run out of it.
func (p *Package) readRun(ctx context.Context, ms []*Member, run []int, out [][]byte, errs []error) {
	first, last := ms[run[0]], ms[run[len(run)-1]]
	li, ok := p.index(last)
	if !ok {
		for _, k := range run {
			errs[k] = p.memberErrorf(ms[k], ErrCorrupt, "not a member of this package")
		}
		return
	}
	start, end := first.HeaderOffset, p.limits[li]
	rc, err := p.stream(ctx, start, end-start)
	var buf []byte
	if err == nil {
		buf, err = io.ReadAll(io.LimitReader(rc, end-start))
		rc.Close()
	}
	for _, k := range run {
		if err != nil {
			errs[k] = p.wrapMember(ms[k], "reading a run of members", err)
			continue
		}
		out[k], errs[k] = p.cutMember(ms[k], buf, start)
	}
}

// cutMember checks m's local header inside buf (which starts at offset
// base of the package) and decodes its data.
func (p *Package) cutMember(m *Member, buf []byte, base int64) ([]byte, error) {
	if err := p.checkMember(m); err != nil {
		return nil, err
	}
	i, _ := p.index(m)
	at := m.HeaderOffset - base
	limit := p.limits[i] - base
	if limit > int64(len(buf)) || at+localHeaderLen > limit {
		return nil, p.memberErrorf(m, ErrCorrupt, "short read of its header")
	}
	h := buf[at:limit]
	if le32(h) != localHeaderSig {
		return nil, p.memberErrorf(m, ErrHostile, "no local header at %d", m.HeaderOffset)
	}
	hdrLen := localHeaderLen + int64(le16(h[26:])) + int64(le16(h[28:]))
	if hdrLen+m.CompressedSize > int64(len(h)) {
		return nil, p.memberErrorf(m, ErrHostile, "data [%d, +%d) overlaps the next member or the directory",
			m.HeaderOffset+hdrLen, m.CompressedSize)
	}
	if err := p.checkLocalHeader(m, h[:hdrLen]); err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.dataOff[i] = m.HeaderOffset + hdrLen
	p.mu.Unlock()
	data, err := p.decodeAll(m, h[hdrLen:hdrLen+m.CompressedSize])
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != m.Size {
		return nil, p.memberErrorf(m, ErrCorrupt, "decodes to %d bytes, the directory says %d", len(data), m.Size)
	}
	if got := crc32.ChecksumIEEE(data); got != m.CRC32 {
		return nil, p.memberErrorf(m, ErrCorrupt, "CRC-32 %08x, the directory says %08x", got, m.CRC32)
	}
	return data, nil
}

// decodeAll decodes a whole member's data, reading at most one byte more
// than its size (so a member that lies about its size is caught).
func (p *Package) decodeAll(m *Member, data []byte) ([]byte, error) {
	var r io.Reader
	switch m.Method {
	case MethodStored:
		return bytes.Clone(data), nil
	case MethodDeflate:
		r = flate.NewReader(bytes.NewReader(data))
	case MethodZstd:
		dec, err := zstd.NewReader(bytes.NewReader(data), zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(zstdMaxWindow))
		if err != nil {
			return nil, p.wrapMember(m, "starting zstd", err)
		}
		defer dec.Close()
		r = dec
	default:
		return nil, p.memberErrorf(m, ErrUnsupportedMethod, "method %d", m.Method)
	}
	out, err := io.ReadAll(io.LimitReader(r, m.Size+1))
	if err != nil {
		return nil, p.memberErrorf(m, ErrCorrupt, "decoding: %v", err)
	}
	return out, nil
}
