package mountutil

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// HoldStatus is what a mount's status says of its hold.
type HoldStatus struct {
	File  string    // the hold file it reads; "" for a mount from before it said
	PID   int       // the process that serves it
	Until time.Time // when its hold ends; zero: no hold
}

// StatusFunc reads the status of the mount at dir.
type StatusFunc func(dir string) (HoldStatus, error)

// ackWait bounds how long Hold and Release wait for the mount's status to
// show what they wrote, and ackPoll is how often they look.
const (
	ackWait = 2 * time.Second
	ackPoll = 50 * time.Millisecond
)

// Holder is the rsfs mount a hold or release is for: the handshake of
// `rsfs hold` and `rsfs release`, which write the hold file the mount
// names in its status and succeed only once its status shows it.
type Holder struct {
	Dir  string // its mount point, symlinks resolved
	File string // the hold file it reads
	PID  int
	Held bool // it showed a hold before
	// earlier is the until of the hold it showed before, if any: a new
	// hold it does not show puts it back rather than end it.
	earlier time.Time
	status  StatusFunc
}

// FindHolder finds the mount at dir (through symlinks) and, from its
// status, the hold file it reads, which must be one (CheckHoldFile).
func FindHolder(dir string, status StatusFunc) (*Holder, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	st, err := status(real)
	if err != nil {
		return nil, err
	}
	h := &Holder{Dir: real, File: st.File, PID: st.PID, Held: !st.Until.IsZero(), earlier: st.Until, status: status}
	if h.File == "" {
		// A mount from before hold_file: its file is where it was.
		h.File = HoldPath(real)
	}
	if err := CheckHoldFile(h.File, processOwner(st.PID)); err != nil {
		return nil, err
	}
	return h, nil
}

// Hold holds the mount's changes back until until, and returns once its
// status shows it. A hold it does not show is taken back: the hold file is
// put back as it was.
func (h *Holder) Hold(until time.Time) error {
	if err := WriteHold(h.File, until); err != nil {
		return err
	}
	if err := h.acknowledged(func(st HoldStatus) bool { return st.Until.Equal(until) }); err != nil {
		h.restore() // no hold the mount does not see; an earlier one stays
		return fmt.Errorf("the mount (pid %d) does not show the hold written to %s: %w", h.PID, h.File, err)
	}
	return nil
}

// Release ends the mount's hold, and returns once its status shows none.
func (h *Holder) Release() error {
	if err := RemoveHold(h.File); err != nil {
		return err
	}
	if err := h.acknowledged(func(st HoldStatus) bool { return st.Until.IsZero() }); err != nil {
		return fmt.Errorf("the mount (pid %d) still shows a hold: %w", h.PID, err)
	}
	return nil
}

// restore puts the hold file back as it was before a hold the mount did
// not show: the earlier hold, or none.
func (h *Holder) restore() {
	var err error
	if h.Held {
		err = WriteHold(h.File, h.earlier)
	} else {
		err = RemoveHold(h.File)
	}
	if err != nil {
		slog.Warn("hold: the hold file could not be put back as it was", "hold_file", h.File, "err", err)
	}
}

// acknowledged waits (ackWait at most) until the mount's status satisfies
// ok.
func (h *Holder) acknowledged(ok func(HoldStatus) bool) error {
	deadline := time.Now().Add(ackWait)
	for {
		st, err := h.status(h.Dir)
		if err != nil {
			return err
		}
		if ok(st) {
			return nil
		}
		if time.Now().After(deadline) {
			if !st.Until.IsZero() {
				return fmt.Errorf("its status says held until %s", st.Until.Format(time.RFC3339))
			}
			return fmt.Errorf("its status says no hold")
		}
		time.Sleep(ackPoll)
	}
}

// processOwner is the uid that runs pid, or -1 if it cannot be told (the
// process is in another pid namespace).
func processOwner(pid int) int {
	st, err := os.Stat("/proc/" + strconv.Itoa(pid))
	if err != nil {
		return -1
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(sys.Uid)
	}
	return -1
}
