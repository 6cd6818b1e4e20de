package zipindex

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"rsfs/fetch"
)

// hostileBase is a small package to patch.
func hostileBase(t *testing.T) []byte {
	return buildZip(t, []entry{
		{name: "a", data: textLike(20_000, 11), method: MethodDeflate},
		{name: "b", data: textLike(3000, 12), method: MethodStored, raw: true},
		{name: "c", data: textLike(9000, 13), method: MethodDeflate, raw: true},
		{name: "zeros", data: make([]byte, 1<<20), method: MethodDeflate},
	})
}

func openPatched(t *testing.T, data []byte, opts Options) (*Package, error) {
	return newPackageServer(t, data).open(t, opts)
}

func TestHostileDirectory(t *testing.T) {
	base := hostileBase(t)
	cases := map[string]func(d []byte){
		"overlapping members": func(d []byte) {
			put32(d[centralEntry(t, d, "b")+42:], uint32(localEntry(t, d, "a")))
		},
		"offset outside the file": func(d []byte) {
			put32(d[centralEntry(t, d, "c")+42:], uint32(len(d)+1000))
		},
		"compressed size past the next member": func(d []byte) {
			put32(d[centralEntry(t, d, "a")+20:], 1<<20)
		},
		"duplicate names": func(d []byte) {
			copy(d[centralEntry(t, d, "b")+46:], "a")
		},
	}
	for name, patch := range cases {
		t.Run(name, func(t *testing.T) {
			d := clone(base)
			patch(d)
			_, err := openPatched(t, d, Options{})
			require.ErrorIs(t, err, ErrHostile)
			assert.Contains(t, err.Error(), "p.zip")
		})
	}
}

func TestHostileMembers(t *testing.T) {
	base := hostileBase(t)
	cases := []struct {
		name, member string
		patch        func(d []byte)
		opts         Options
		want         error
	}{
		{"local name differs", "b", func(d []byte) { d[localEntry(t, d, "b")+30] = 'x' }, Options{}, ErrHostile},
		{"local method differs", "c", func(d []byte) { put16(d[localEntry(t, d, "c")+8:], 0) }, Options{}, ErrHostile},
		{"local size differs", "c", func(d []byte) { put32(d[localEntry(t, d, "c")+22:], 9001) }, Options{}, ErrHostile},
		{"stored sizes differ", "b", func(d []byte) {
			put32(d[centralEntry(t, d, "b")+24:], 2000)
			put32(d[localEntry(t, d, "b")+22:], 2000)
		}, Options{}, ErrHostile},
		{"bomb ratio", "zeros", func([]byte) {}, Options{MaxRatio: 100}, ErrHostile},
		{"size lies longer", "a", func(d []byte) { put32(d[centralEntry(t, d, "a")+24:], 20_001) }, Options{}, ErrCorrupt},
		{"size lies shorter", "a", func(d []byte) { put32(d[centralEntry(t, d, "a")+24:], 19_999) }, Options{}, ErrCorrupt},
		{"crc wrong", "a", func(d []byte) { d[centralEntry(t, d, "a")+16] ^= 0xff }, Options{}, ErrCorrupt},
		{"crc wrong stored", "b", func(d []byte) {
			d[centralEntry(t, d, "b")+16] ^= 1
			d[localEntry(t, d, "b")+14] ^= 1
		}, Options{}, ErrCorrupt},
		{"deflate data damaged", "a", func(d []byte) {
			l := localEntry(t, d, "a") + 30 + 1
			for i := l + 100; i < l+300; i++ {
				d[i] = 0xff
			}
		}, Options{}, ErrCorrupt},
		{"unsupported method 12", "c", func(d []byte) {
			put16(d[centralEntry(t, d, "c")+10:], 12)
			put16(d[localEntry(t, d, "c")+8:], 12)
		}, Options{}, ErrUnsupportedMethod},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := clone(base)
			tc.patch(d)
			p, err := openPatched(t, d, tc.opts)
			require.NoError(t, err)
			got, err := readMember(t, p, tc.member, 0, 1<<30)
			require.ErrorIs(t, err, tc.want, "read %d bytes", len(got))
			assert.Contains(t, err.Error(), `"`+tc.member+`"`)
			assert.Contains(t, err.Error(), "p.zip")
		})
	}
}

func TestChangedPackageFailsWithErrChanged(t *testing.T) {
	base := hostileBase(t)
	ps := newPackageServer(t, base)
	p, err := ps.open(t, Options{})
	require.NoError(t, err)
	changed := clone(base)
	changed[len(changed)/2] ^= 1
	ps.replace(changed, `"v2"`)
	_, err = readMember(t, p, "b", 0, 100)
	require.ErrorIs(t, err, fetch.ErrChanged)
}
