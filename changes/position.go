package changes

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Position is how far a resource set's changes have been applied: every
// change up to Time, and of those at exactly Time, the ones in Seen (a set,
// so 100,000 changes at one instant cost a lookup each, not a scan).
// Ahead holds, by URI, changes applied ahead of the position: pushed ones
// the Change List has not confirmed yet, and ones dated implausibly far in
// the future, which never move Time.
type Position struct {
	Time  time.Time
	Seen  map[string]struct{}
	Ahead map[string]Mark
}

// Mark is a change applied ahead of the position.
type Mark struct {
	At  time.Time `json:"at"`
	Key string    `json:"key"`
}

type positionJSON struct {
	Time  time.Time       `json:"time"`
	Seen  []string        `json:"seen,omitempty"`
	Ahead map[string]Mark `json:"ahead,omitempty"`
}

// MarshalJSON writes Seen as a sorted list (the encoding of earlier
// snapshots).
func (p Position) MarshalJSON() ([]byte, error) {
	j := positionJSON{Time: p.Time, Ahead: p.Ahead}
	for k := range p.Seen {
		j.Seen = append(j.Seen, k)
	}
	slices.Sort(j.Seen)
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (p *Position) UnmarshalJSON(data []byte) error {
	var j positionJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return fmt.Errorf("position: %w", err)
	}
	*p = Position{Time: j.Time, Ahead: j.Ahead}
	for _, k := range j.Seen {
		p.seen(k)
	}
	return nil
}

func (p *Position) seen(k string) {
	if p.Seen == nil {
		p.Seen = map[string]struct{}{}
	}
	p.Seen[k] = struct{}{}
}

// clone returns a deep copy.
func (p *Position) clone() Position {
	c := Position{Time: p.Time}
	if len(p.Seen) > 0 {
		c.Seen = make(map[string]struct{}, len(p.Seen))
		for k := range p.Seen {
			c.Seen[k] = struct{}{}
		}
	}
	if len(p.Ahead) > 0 {
		c.Ahead = make(map[string]Mark, len(p.Ahead))
		for k, m := range p.Ahead {
			c.Ahead[k] = m
		}
	}
	return c
}

// passed reports whether a change is behind the position: applied, and
// passed by it.
func (p *Position) passed(c *change) bool {
	if c.at.Before(p.Time) {
		return true
	}
	_, ok := p.Seen[c.key]
	return ok && c.at.Equal(p.Time)
}

// appliedAhead reports whether a change need not be applied because one
// applied ahead of the position covers it: the very same change, or a
// later (pushed, plausibly dated) one to the same resource. The position
// still moves past it.
func (p *Position) appliedAhead(c *change, horizon time.Time) bool {
	m, ok := p.Ahead[c.entry.Loc]
	if !ok {
		return false
	}
	if m.At.Equal(c.at) && m.Key == c.key {
		return true
	}
	return c.at.Before(m.At) && !m.At.After(horizon)
}

// advance moves the position past a change. A change dated past the
// horizon is marked ahead instead: it never moves Time.
func (p *Position) advance(c *change, horizon time.Time) {
	if c.at.After(horizon) {
		p.markAhead(c)
		return
	}
	if c.at.After(p.Time) {
		p.Time, p.Seen = c.at, nil
		p.pruneAhead()
	}
	p.seen(c.key)
}

// markAhead records a change applied ahead of the position.
func (p *Position) markAhead(c *change) {
	if p.Ahead == nil {
		p.Ahead = map[string]Mark{}
	}
	p.Ahead[c.entry.Loc] = Mark{At: c.at, Key: c.key}
}

// pruneAhead forgets marks the position has passed.
func (p *Position) pruneAhead() {
	for uri, m := range p.Ahead {
		if m.At.Before(p.Time) {
			delete(p.Ahead, uri)
		}
	}
}
