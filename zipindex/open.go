package zipindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"

	mzip "github.com/minio/zipindex"
)

var packageIDs atomic.Uint64

// Open reads the central directory of the size-byte package behind r: one
// suffix read of the last ~128 KiB, one more when the directory starts
// before it (and one for a ZIP64 end record placed before the tail). It
// checks the directory's structure: entries inside the file and not
// overlapping, unique names, and the limits in opts. ctx bounds every read
// when r is also a RangeReader (fetch.ReaderAt is); otherwise it is checked
// between reads.
func Open(ctx context.Context, r io.ReaderAt, size int64, name string, opts Options) (*Package, error) {
	p := &Package{Name: name, Size: size, r: r, opts: opts.withDefaults(), id: packageIDs.Add(1), dataOff: map[int]int64{}}
	if size < eocdLen {
		return nil, p.errorf(ErrCorrupt, "%d bytes is too small for a ZIP package", size)
	}
	t, err := p.readTail(ctx)
	if err != nil {
		return nil, err
	}
	end, err := p.findEnd(ctx, t)
	if err != nil {
		return nil, err
	}
	if err := p.checkEnd(end); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("zip %s: %w", name, err)
	}
	if err := t.extend(ctx, r, int64(end.dirOffset)); err != nil {
		return nil, fmt.Errorf("zip %s: reading the central directory: %w", name, err)
	}
	if err := p.parseDirectory(t, end); err != nil {
		return nil, err
	}
	if err := p.checkLayout(int64(end.dirOffset)); err != nil {
		return nil, err
	}
	return p, nil
}

// parseDirectory fills Members from the directory held in t.
func (p *Package) parseDirectory(t *tail, end dirEnd) error {
	p.Members = make([]Member, 0, end.records)
	filter := func(f *mzip.File, e *mzip.ZipDirEntry) *mzip.File {
		p.Members = append(p.Members, Member{
			Name: f.Name, Method: f.Method, Flags: f.Flags,
			CompressedSize: int64(f.CompressedSize64), Size: int64(f.UncompressedSize64),
			CRC32: f.CRC32, HeaderOffset: f.Offset, Modified: e.Modified,
		})
		return nil // keep nothing in minio's list
	}
	buf := t.buf[int64(end.dirOffset)-t.off:]
	if _, err := mzip.ReadDir(buf, p.Size, filter); err != nil {
		var more mzip.ErrNeedMoreData
		if errors.As(err, &more) {
			return p.errorf(ErrHostile, "end records disagree about the directory's start")
		}
		return p.errorf(ErrCorrupt, "reading the central directory: %v", err)
	}
	if uint64(len(p.Members)) != end.records {
		return p.errorf(ErrCorrupt, "directory holds %d entries, its end record says %d", len(p.Members), end.records)
	}
	return nil
}

// checkLayout checks that every member lies inside the file, before the
// directory, without overlapping the next one, and indexes the names.
func (p *Package) checkLayout(dirOffset int64) error {
	n := len(p.Members)
	p.byName = make(map[string]int, n)
	p.limits = make([]int64, n)
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		return cmpInt64(p.Members[a].HeaderOffset, p.Members[b].HeaderOffset)
	})
	for k, i := range order {
		m := &p.Members[i]
		limit := dirOffset
		if k+1 < n {
			limit = p.Members[order[k+1]].HeaderOffset
		}
		if err := p.checkExtent(m, limit); err != nil {
			return err
		}
		p.limits[i] = limit
		key := strings.TrimPrefix(m.Name, "/")
		if _, dup := p.byName[key]; dup {
			return p.errorf(ErrHostile, "two members named %q", m.Name)
		}
		p.byName[key] = int(i)
	}
	return nil
}

// checkExtent checks that m's smallest possible extent ends by limit.
func (p *Package) checkExtent(m *Member, limit int64) error {
	if m.HeaderOffset < 0 || m.CompressedSize < 0 || m.Size < 0 {
		return p.memberErrorf(m, ErrHostile, "negative offset or size")
	}
	minEnd := m.HeaderOffset + localHeaderLen + int64(len(m.Name)) + m.CompressedSize
	if minEnd > limit || minEnd < m.HeaderOffset {
		return p.memberErrorf(m, ErrHostile, "extent [%d, %d) overlaps the next member or the directory at %d", m.HeaderOffset, minEnd, limit)
	}
	return nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
