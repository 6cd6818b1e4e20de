package catalog

// uriTable finds files by URI hash: open addressing with linear probing over
// a flat []uint64 (8 bytes a slot, no pointers), deletion by backward shift.
// A slot holds the file's NodeID in its low 32 bits and a 32-bit tag of the
// mixed hash in its high bits; the tag decides the home slot too, so probing
// and growing never touch the records. Several files may share a tag;
// callers compare URIs.
type uriTable struct {
	slots []uint64 // 0 = empty (NodeID 0 is never a file)
	shift uint     // 32 - log2(len(slots))
	count int
}

const minTableBits = 10

func (t *uriTable) init() {
	t.slots = make([]uint64, 1<<minTableBits)
	t.shift = 32 - minTableBits
}

func uriTag(h uint64) uint32 { return uint32((h * 0x9E3779B97F4A7C15) >> 32) }

func (t *uriTable) home(tag uint32) int { return int(tag >> t.shift) }

func (t *uriTable) mask() int { return len(t.slots) - 1 }

// each calls fn for every ID whose tag matches h's, until fn returns false.
func (t *uriTable) each(h uint64, fn func(NodeID) bool) {
	tag := uriTag(h)
	for i := t.home(tag); t.slots[i] != 0; i = (i + 1) & t.mask() {
		if uint32(t.slots[i]>>32) == tag && !fn(NodeID(t.slots[i])) {
			return
		}
	}
}

// insert adds id under hash h.
func (t *uriTable) insert(h uint64, id NodeID) {
	if (t.count+1)*4 > len(t.slots)*3 {
		t.grow()
	}
	t.place(uint64(uriTag(h))<<32 | uint64(id))
	t.count++
}

func (t *uriTable) place(slot uint64) {
	i := t.home(uint32(slot >> 32))
	for t.slots[i] != 0 {
		i = (i + 1) & t.mask()
	}
	t.slots[i] = slot
}

// canInsert reports whether one more entry fits in a table of at most
// 2^maxBits slots.
func (t *uriTable) canInsert(maxBits int) bool {
	return (t.count+1)*4 <= len(t.slots)*3 || 32-int(t.shift) < maxBits
}

func (t *uriTable) grow() {
	if t.shift == 0 { // an invariant: Catalog.room checks canInsert first
		panic("catalog: URI index full unchecked")
	}
	old := t.slots
	t.slots = make([]uint64, 2*len(old))
	t.shift--
	for _, slot := range old {
		if slot != 0 {
			t.place(slot)
		}
	}
}

// remove deletes id (stored under hash h), shifting later entries of the
// cluster back so probes stay unbroken.
func (t *uriTable) remove(h uint64, id NodeID) {
	want := uint64(uriTag(h))<<32 | uint64(id)
	i := t.home(uriTag(h))
	for t.slots[i] != want {
		if t.slots[i] == 0 {
			return
		}
		i = (i + 1) & t.mask()
	}
	t.count--
	for j := i; ; {
		j = (j + 1) & t.mask()
		if t.slots[j] == 0 {
			break
		}
		k := t.home(uint32(t.slots[j] >> 32))
		// Move slots[j] into the hole at i unless its home lies cyclically in (i, j].
		if (i <= j && (k <= i || k > j)) || (i > j && k <= i && k > j) {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = 0
}

// bytes is the memory the table holds.
func (t *uriTable) bytes() int64 { return int64(len(t.slots)) * 8 }
