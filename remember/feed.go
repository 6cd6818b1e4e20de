package remember

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"rsfs/atomicfile"
)

// FeedPath is where the state of an Atom-PMH feed is remembered in the
// state directory dir (the feed's harvest state and the sizes it learned;
// package atomfeed encodes it).
func FeedPath(dir string) string { return filepath.Join(dir, "feed.state") }

// SaveFeed writes a feed's state to dir, atomically. With dir "" it does
// nothing.
func SaveFeed(dir string, data []byte) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("feed state: %w", err)
	}
	if err := atomicfile.WriteBytes(FeedPath(dir), data); err != nil {
		return fmt.Errorf("feed state: %w", err)
	}
	return nil
}

// LoadFeed reads a feed's state from dir; nil, nil when there is none.
func LoadFeed(dir string) ([]byte, error) {
	if dir == "" {
		return nil, nil
	}
	data, err := os.ReadFile(FeedPath(dir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("feed state: %w", err)
	}
	return data, nil
}
