package zipindex

import "context"

const (
	localHeaderSig = 0x04034b50
	localHeaderLen = 30
	zip64ExtraID   = 0x0001
	// localExtraGuess is read beyond the name with the header, so that one
	// request usually covers the extra field too.
	localExtraGuess = 512
)

// dataOffset returns where m's data starts, reading and checking its local
// header the first time.
func (p *Package) dataOffset(ctx context.Context, m *Member) (int64, error) {
	i, ok := p.index(m)
	if !ok {
		return 0, p.memberErrorf(m, ErrCorrupt, "not a member of this package")
	}
	p.mu.Lock()
	off, known := p.dataOff[i]
	p.mu.Unlock()
	if known {
		return off, nil
	}
	off, err := p.readLocalHeader(ctx, m, p.limits[i])
	if err != nil {
		return 0, err
	}
	p.mu.Lock()
	p.dataOff[i] = off
	p.mu.Unlock()
	return off, nil
}

// readLocalHeader reads m's local header and checks it against the
// directory. limit is where the next member (or the directory) starts.
func (p *Package) readLocalHeader(ctx context.Context, m *Member, limit int64) (int64, error) {
	want := min(localHeaderLen+int64(len(m.Name))+localExtraGuess, limit-m.HeaderOffset)
	buf := make([]byte, want)
	if _, err := readFull(ctx, p.r, buf, m.HeaderOffset); err != nil {
		return 0, p.wrapMember(m, "reading the local header", err)
	}
	if le32(buf) != localHeaderSig {
		return 0, p.memberErrorf(m, ErrHostile, "no local header at %d", m.HeaderOffset)
	}
	nameLen, extraLen := int64(le16(buf[26:])), int64(le16(buf[28:]))
	end := localHeaderLen + nameLen + extraLen
	if m.HeaderOffset+end+m.CompressedSize > limit {
		return 0, p.memberErrorf(m, ErrHostile, "data [%d, +%d) overlaps the next member or the directory at %d",
			m.HeaderOffset+end, m.CompressedSize, limit)
	}
	if end > int64(len(buf)) {
		more := make([]byte, end)
		if _, err := readFull(ctx, p.r, more, m.HeaderOffset); err != nil {
			return 0, p.wrapMember(m, "reading the local header", err)
		}
		buf = more
	}
	if err := p.checkLocalHeader(m, buf[:end]); err != nil {
		return 0, err
	}
	return m.HeaderOffset + end, nil
}

// checkLocalHeader compares a whole local header with the directory entry.
func (p *Package) checkLocalHeader(m *Member, h []byte) error {
	flags, method := le16(h[6:]), le16(h[8:])
	nameLen := int(le16(h[26:]))
	name := string(h[localHeaderLen : localHeaderLen+nameLen])
	switch {
	case name != m.Name:
		return p.memberErrorf(m, ErrHostile, "local header names %q", name)
	case method != m.Method:
		return p.memberErrorf(m, ErrHostile, "local header says method %d, the directory %d", method, m.Method)
	case flags&0x1 != 0 || m.Flags&0x1 != 0:
		return p.memberErrorf(m, ErrUnsupportedMethod, "encrypted")
	case flags&0x8 != 0 || m.hasDataDescriptor():
		return nil // CRC and sizes follow the data; the directory's are used
	}
	crc := le32(h[14:])
	csize, size := int64(le32(h[18:])), int64(le32(h[22:]))
	if csize == 0xffffffff || size == 0xffffffff {
		var ok bool
		if size, csize, ok = zip64Sizes(h[localHeaderLen+nameLen:], size, csize); !ok {
			return p.memberErrorf(m, ErrHostile, "local header lacks its ZIP64 sizes")
		}
	}
	if crc != m.CRC32 || csize != m.CompressedSize || size != m.Size {
		return p.memberErrorf(m, ErrHostile, "local header (crc %08x, sizes %d/%d) disagrees with the directory (crc %08x, sizes %d/%d)",
			crc, csize, size, m.CRC32, m.CompressedSize, m.Size)
	}
	return nil
}

// zip64Sizes reads the ZIP64 extra field of a local header: the
// uncompressed then the compressed size, each present when its 32-bit field
// is 0xffffffff.
func zip64Sizes(extra []byte, size, csize int64) (int64, int64, bool) {
	for len(extra) >= 4 {
		id, n := le16(extra), int(le16(extra[2:]))
		if 4+n > len(extra) {
			return 0, 0, false
		}
		field := extra[4 : 4+n]
		extra = extra[4+n:]
		if id != zip64ExtraID {
			continue
		}
		var ok bool
		if size, field, ok = zip64Value(size, field); !ok {
			return 0, 0, false
		}
		if csize, _, ok = zip64Value(csize, field); !ok {
			return 0, 0, false
		}
		return size, csize, true
	}
	return 0, 0, false
}

// zip64Value takes the next 8-byte value from field when v is the 32-bit
// escape 0xffffffff.
func zip64Value(v int64, field []byte) (int64, []byte, bool) {
	if v != 0xffffffff {
		return v, field, true
	}
	if len(field) < 8 {
		return 0, nil, false
	}
	return int64(le64(field)), field[8:], true
}
