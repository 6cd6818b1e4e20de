package main

import (
	"errors"
	"fmt"
	"strings"
)

// exitUsage is the exit status of a command line that is wrong: an
// unknown flag or option, a flag's value out of its range. Nothing was
// started.
const exitUsage = 2

// usageError is a command line that is wrong; main exits exitUsage for
// it.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usagef is a usageError.
func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// asUsage marks err, if not nil, as a usage error.
func asUsage(err error) error {
	if err == nil {
		return nil
	}
	return &usageError{err}
}

// isUsage reports whether err is (or wraps) a usage error.
func isUsage(err error) bool {
	var u *usageError
	return errors.As(err, &u)
}

// flagError adds to pflag's error for a value that does not parse what a
// right one looks like, where pflag's own says nothing of it: a duration
// needs a unit ("time: missing unit in duration "5"").
func flagError(err error) error {
	if strings.Contains(err.Error(), ": time: ") {
		return fmt.Errorf("%w; use a unit: 5s, 1m, 1h", err)
	}
	return err
}
