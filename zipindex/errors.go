package zipindex

import (
	"errors"
	"fmt"
)

// Sentinel errors. Returned errors wrap them with the package name and, where
// one is concerned, the member name.
var (
	// ErrUnsupportedMethod: a member's compression method is not stored (0),
	// deflate (8) or zstd (93).
	ErrUnsupportedMethod = errors.New("zipindex: unsupported compression method")
	// ErrHostile: the package's structure is inconsistent in a way that could
	// yield wrong bytes or unbounded work: entries outside the file or
	// overlapping, a local header that disagrees with the directory, a
	// compression ratio above Options.MaxRatio, too many members, a directory
	// larger than Options.MaxDirBytes.
	ErrHostile = errors.New("zipindex: hostile package")
	// ErrCorrupt: a member's data does not decode to what the directory
	// promises (length, CRC-32), or the directory cannot be read.
	ErrCorrupt = errors.New("zipindex: corrupt package")
)

// errorf wraps sentinel with the package name and a message.
func (p *Package) errorf(sentinel error, format string, args ...any) error {
	return fmt.Errorf("zip %s: %s: %w", p.Name, fmt.Sprintf(format, args...), sentinel)
}

// memberErrorf wraps sentinel with the package and member names.
func (p *Package) memberErrorf(m *Member, sentinel error, format string, args ...any) error {
	return fmt.Errorf("zip %s: member %q: %s: %w", p.Name, m.Name, fmt.Sprintf(format, args...), sentinel)
}

// wrapMember wraps a non-nil err with the package and member names.
func (p *Package) wrapMember(m *Member, what string, err error) error {
	return fmt.Errorf("zip %s: member %q: %s: %w", p.Name, m.Name, what, err)
}
