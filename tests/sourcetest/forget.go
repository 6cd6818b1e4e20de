package sourcetest

// ForgetChanges empties every Change List, as a Source that prunes its old
// entries does: each list now starts (from=) after the newest change, so a
// Destination whose position is older must reload the Resource Lists.
func (s *Source) ForgetChanges() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.startAt = s.nextTimeLocked()
	for _, set := range s.sets {
		set.changes = nil
		set.seq++
	}
}
