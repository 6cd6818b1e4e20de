package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// exitFailure is the exit status of a command that could not do its work.
// A command line that is wrong exits exitUsage (usage.go); audit has
// statuses of its own (audit.go).
const exitFailure = 1

// exitError ends rsfs with a given exit status. Its error, if any, is
// printed as every error is; with none, nothing is printed (the command
// has said what it had to, as audit's report of drift).
type exitError struct {
	code int
	err  error
}

// exitWith is an exitError: status code, and err (nil: print nothing).
func exitWith(code int, err error) error { return &exitError{code: code, err: err} }

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// exitCode is the exit status for err, and the error to print for it (nil:
// nothing to print): 0 for nil, an exitError's own status, exitUsage for a
// command line that is wrong, else exitFailure. main prints the error once
// (printError); the root command silences cobra's own printing.
func exitCode(err error) (int, error) {
	if err == nil {
		return 0, nil
	}
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		return ee.code, ee.err
	case isUsage(err):
		return exitUsage, err
	case isUnknownCommand(err):
		return exitUsage, unknownCommand(err)
	}
	return exitFailure, err
}

// isUnknownCommand reports whether err is cobra's error for a first
// argument that names no command: cobra returns it as a plain error, from
// its own argument check of a command with subcommands.
func isUnknownCommand(err error) bool {
	return strings.HasPrefix(err.Error(), "unknown command ")
}

// unknownCommand rewrites cobra's unknown command error, whose suggestions
// take several lines ("...\n\nDid you mean this?\n\tinspect\n"), as one
// line: `unknown command "inspcet" for "rsfs" (did you mean inspect?); see
// 'rsfs --help'`.
func unknownCommand(err error) error {
	head, suggestions, _ := strings.Cut(err.Error(), "\n\nDid you mean this?\n")
	msg := head
	if s := strings.Fields(suggestions); len(s) > 0 {
		msg += " (did you mean " + strings.Join(s, " or ") + "?)"
	}
	return usagef("%s; see 'rsfs --help'", msg)
}

// usageArgs makes the argument checks of root's commands usage errors
// (exit status 2) that say how the command is called:
// "accepts 2 arg(s), received 1; usage: rsfs mount URL DIR [flags]".
func usageArgs(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if check := c.Args; check != nil {
			c.Args = func(cmd *cobra.Command, args []string) error {
				if err := check(cmd, args); err != nil {
					return usagef("%v; usage: %s", err, cmd.UseLine())
				}
				return nil
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
