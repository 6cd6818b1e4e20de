package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"rsfs/audit"
	"rsfs/discover"
	"rsfs/fs"
	"rsfs/protocol"
	"rsfs/source"
	"rsfs/statedir"
)

// audit's exit statuses, as diff(1)'s: no drift, drift, trouble.
const (
	auditClean = 0
	auditDrift = 1
	auditError = 2
)

func auditCmd() *cobra.Command {
	var o auditOptions
	cmd := &cobra.Command{
		Use:   "audit URL|DIR",
		Short: "Compare what a mount shows, or would show from its snapshot, with the Source as it is now",
		Long: `audit reads the Source as it is now (its Resource Lists, plus every change
its Change Lists and Change Dumps list after them, dated as a mount dates
them) and compares it, path by path, with what a mount shows:

  DIR  the live rsfs mount at DIR: its tree as stat(2) and its extended
       attributes show it (path, size, mtime, URI, hashes);
  URL  what a mount of URL would show from its snapshot in the state
       directory (--cache-dir, as for mount) before it catches up.

It prints how many paths the Source has and the mount lacks (created), has in
another version (updated: another hash, else another lastmod or size) and
the mount has and the Source lacks (deleted), with examples. --bytes N also
reads N files picked at random (from the mount for DIR, from the Source for
URL) and checks their length and every md5, sha-1 and sha-256 published; a
mismatch, or a file that cannot be read, is listed as wrong bytes.

Exit status: 0 no drift, 1 drift (or wrong bytes), 2 trouble (the Source or
the mount could not be read, no snapshot).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if o.bytes < 0 {
				return usagef("--bytes %d: want 0 or more files", o.bytes)
			}
			rep, err := runAudit(cmd.Context(), &o, args[0])
			if err != nil {
				return exitWith(auditError, err)
			}
			write := rep.WriteText
			if o.asJSON {
				write = rep.WriteJSON
			}
			if err := write(cmd.OutOrStdout()); err != nil {
				return exitWith(auditError, err)
			}
			if rep.Drift > 0 {
				return exitWith(auditDrift, nil) // the report says what
			}
			return nil
		},
	}
	o.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&o.cacheDir, "cache-dir", "", "for URL: where the mount remembers Sources (as mount's --cache-dir): default $XDG_CACHE_HOME/rsfs")
	fl.IntVar(&o.bytes, "bytes", 0, "also read this many files, picked at random, and check them against the published length and hashes")
	fl.BoolVar(&o.asJSON, "json", false, "print the report as JSON")
	return cmd
}

type auditOptions struct {
	sourceFlags
	cacheDir string
	bytes    int
	asJSON   bool
}

// runAudit audits target: a directory (a live mount) or a URL (its
// snapshot).
func runAudit(ctx context.Context, o *auditOptions, target string) (*audit.Report, error) {
	if fi, err := os.Stat(target); err == nil && fi.IsDir() {
		return auditMount(ctx, o, target)
	}
	if err := checkSourceURL(target); err != nil {
		return nil, fmt.Errorf("%w, nor a directory", err)
	}
	return auditSnapshot(ctx, o, target)
}

// auditSnapshot audits the snapshot a mount of rawURL would start from.
func auditSnapshot(ctx context.Context, o *auditOptions, rawURL string) (*audit.Report, error) {
	stateDir, err := (&mountFlags{cacheDir: o.cacheDir}).stateDir(rawURL)
	if err != nil {
		return nil, err
	}
	if stateDir == "" {
		return nil, errors.New("--cache-dir none: a mount remembers nothing, so there is no snapshot to audit")
	}
	snapPath := statedir.SnapshotPath(stateDir)
	if _, err := os.Stat(snapPath); err != nil {
		return nil, fmt.Errorf("no snapshot of %s (looked for %s): mount it first, or give the --cache-dir it was mounted with; to audit a live mount, give its directory", rawURL, snapPath)
	}
	src, err := auditSource(ctx, o, rawURL)
	if err != nil {
		return nil, err
	}
	return audit.Snapshot(ctx, src, snapPath, audit.Options{URL: rawURL, Bytes: o.bytes})
}

// auditMount audits the live mount at dir, of the Source its status names.
func auditMount(ctx context.Context, o *auditOptions, dir string) (*audit.Report, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	st, err := fs.ReadReport(abs)
	if err != nil {
		return nil, err
	}
	if st.Protocol != "" && st.Protocol != protocol.ResourceSync {
		return nil, fmt.Errorf("%s mounts an %s feed: audit reads ResourceSync Sources only", abs, st.Protocol)
	}
	src, err := auditSource(ctx, o, st.Source)
	if err != nil {
		return nil, err
	}
	return audit.Mount(ctx, src, abs, audit.Options{URL: st.Source, Bytes: o.bytes})
}

// auditSource discovers the Source at rawURL afresh.
func auditSource(ctx context.Context, o *auditOptions, rawURL string) (*source.Source, error) {
	client, err := o.client(rawURL)
	if err != nil {
		return nil, err
	}
	found, err := discover.At(ctx, rawURL, o.sourceOptions(client))
	if err != nil {
		return nil, err
	}
	if p := found.Protocol(); p != protocol.ResourceSync {
		return nil, fmt.Errorf("%s is an %s feed: audit reads ResourceSync Sources only", rawURL, p)
	}
	return found.Source, nil
}
