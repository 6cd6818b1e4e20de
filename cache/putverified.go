package cache

import "fmt"

// PutVerified stores a whole small content (at most one block) that was
// read some other way, e.g. one of a batch of dump members read together,
// after the checks a fill makes: the exact length, then the published hash.
// Bytes that fail are not stored, and the ErrIntegrity is returned.
func (c *Cache) PutVerified(content Content, data []byte) error {
	if content.Size > int64(c.blockSize) {
		return fmt.Errorf("cache: %s: %d bytes is more than one block", content.Name, content.Size)
	}
	if int64(len(data)) != content.Size {
		return fmt.Errorf("%w: %s: %d bytes, published length %d", ErrIntegrity, content.Name, len(data), content.Size)
	}
	if d, ok := strongestDigest(content.Hashes); ok {
		if err := d.checkData(content.Name, data); err != nil {
			return err
		}
	}
	c.Put(content.ID, 0, data)
	return nil
}
