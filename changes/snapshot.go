package changes

import (
	"encoding/json"
	"fmt"
)

// Snapshot calls save with the Source's state (source.State), its
// positions those of every set. The state is taken while no change is
// being applied, and saved (with the catalog, by save) after the lock is
// let go: the catalog saved is then as new as the positions or newer, and
// changes applied twice are harmless.
func (f *Follower) Snapshot(save func(state []byte) error) error {
	f.applyMu.Lock()
	positions, err := json.Marshal(f.Positions())
	var data []byte
	if err == nil {
		data, err = json.Marshal(f.s.State(positions))
	}
	f.applyMu.Unlock()
	if err != nil {
		return fmt.Errorf("encode source state: %w", err)
	}
	return save(data)
}

// DecodePositions reads the positions of a state saved by Snapshot
// (source.State.Positions), for New. A state without positions has none
// (nil).
func DecodePositions(data json.RawMessage) (map[string]Position, error) {
	if len(data) == 0 {
		return nil, nil
	}
	var positions map[string]Position
	if err := json.Unmarshal(data, &positions); err != nil {
		return nil, fmt.Errorf("decode source state: %w", err)
	}
	return positions, nil
}
