package cache

// PutVerified stores a whole small content (at most one block) that was
// read some other way, e.g. one of a batch of dump members read together,
// after the checks a fill makes: the exact length, then the published hash.
// Bytes that fail are not stored, and the ErrIntegrity is returned.
func (c *Cache) PutVerified(content Content, data []byte) error {
	if err := c.checkSmall(content, data); err != nil {
		return err
	}
	c.Put(content.ID, 0, data)
	return nil
}
