package main

import (
	"strings"

	"github.com/spf13/cobra"

	"rsfs/mountutil"
)

// addCompletions tells cobra's shell completion (`rsfs completion
// bash|zsh|fish|powershell`, which calls `rsfs __complete ARGS...`) what
// each argument and flag takes: a URL completes to nothing (no file names),
// or to the Sources mounted now for inspect and audit; DIR to the rsfs
// mounts now for status, hold, release and audit, else to directories.
func addCompletions(root *cobra.Command) {
	for _, c := range root.Commands() {
		switch c.Name() {
		case "mount":
			c.ValidArgsFunction = func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
				if len(args) == 1 {
					return nil, cobra.ShellCompDirectiveFilterDirs
				}
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
		case "inspect":
			c.ValidArgsFunction = firstArg(func(toComplete string) ([]string, cobra.ShellCompDirective) {
				return mountutil.RsfsMounts(toComplete, false, true), cobra.ShellCompDirectiveNoFileComp
			})
		case "status", "hold", "release":
			c.ValidArgsFunction = firstArg(mountDirs)
		case "audit":
			c.ValidArgsFunction = firstArg(func(toComplete string) ([]string, cobra.ShellCompDirective) {
				if m := mountutil.RsfsMounts(toComplete, true, true); len(m) > 0 {
					return m, cobra.ShellCompDirectiveNoFileComp
				}
				return nil, cobra.ShellCompDirectiveFilterDirs
			})
		}
		flagValues(c, "cache-dir", nil, cobra.ShellCompDirectiveFilterDirs)
		flagValues(c, "log-file", nil, cobra.ShellCompDirectiveDefault)
	}
	flagValues(root, "log-level", []string{"debug", "info", "warn", "error"}, cobra.ShellCompDirectiveNoFileComp)
	flagValues(root, "log-format", []string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp)
}

// firstArg completes a command's first argument with f, and no more.
func firstArg(f func(toComplete string) ([]string, cobra.ShellCompDirective)) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return f(toComplete)
	}
}

// mountDirs completes DIR: the rsfs mounts now, else any directory.
func mountDirs(toComplete string) ([]string, cobra.ShellCompDirective) {
	if m := mountutil.RsfsMounts(toComplete, true, false); len(m) > 0 {
		return m, cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveFilterDirs
}

// flagValues completes flag name of c (a persistent flag if c is the
// root), when c has it.
func flagValues(c *cobra.Command, name string, values []string, d cobra.ShellCompDirective) {
	fl := c.Flags().Lookup(name)
	if c.Parent() == nil {
		fl = c.PersistentFlags().Lookup(name)
	}
	if fl == nil {
		return
	}
	_ = c.RegisterFlagCompletionFunc(name, func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, v := range values {
			if strings.HasPrefix(v, toComplete) {
				out = append(out, v)
			}
		}
		return out, d
	})
}
