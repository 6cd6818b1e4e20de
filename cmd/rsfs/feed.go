package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"rsfs/atomfeed"
	"rsfs/atompmh"
	"rsfs/cache"
	"rsfs/catalog"
	"rsfs/fs"
	"rsfs/mountutil"
	"rsfs/remember"
	"rsfs/source"
)

// openFeed returns the Atom-PMH feed discovery found, read with the client
// built for rawURL (the URL the user gave, whose origin gets credentials).
func openFeed(sf *sourceFlags, rawURL string, found *source.FeedFound) (*atomfeed.Feed, error) {
	client, err := sf.client(rawURL)
	if err != nil {
		return nil, err
	}
	return atomfeed.New(found.URL, atomfeed.Options{Client: client, Parse: atompmh.Options{MaxBytes: sf.maxDoc}, Discovered: found})
}

// serveFeed harvests the Atom-PMH feed discovery found (or rebuilds it from
// what stateDir remembers) and mounts it on dir through the same catalog,
// cache and file system as a ResourceSync Source.
func serveFeed(cmd *cobra.Command, mf *mountFlags, rawURL string, found *source.FeedFound, dir, stateDir string) (*mountedFS, error) {
	slog.Info("mounting an Atom-PMH feed", "feed", found.URL)
	feed, err := openFeed(&mf.sourceFlags, rawURL, found)
	if err != nil {
		return nil, err
	}
	var fsys *fs.FS // set before the follower runs; loading has no effects
	follower, err := loadFeed(cmd.Context(), feed, stateDir, atomfeed.FollowOptions{
		Interval: mf.pollInterval,
		Effects: func(e []catalog.Effect) {
			if fsys != nil {
				fsys.Notify(e)
			}
		},
		Save:      func(data []byte) error { return remember.SaveFeed(stateDir, data) },
		SaveEvery: 2 * time.Minute,
		Held:      func() bool { return mountutil.Held(dir) },
	})
	if err != nil {
		return nil, err
	}
	cat := follower.Catalog()
	blocks, err := newCache(mf, stateDir)
	if err != nil {
		return nil, err
	}
	report := newReporter(mf, rawURL, dir, stateDir)
	fsys = fs.New(fs.Config{
		Status:  report.json,
		Catalog: cat,
		Cache:   blocks,
		Origin:  func(r *catalog.Resource) cache.Origin { return staleWatch{feed.OriginOf(r), follower.PollSoon} },
		UID:     uint32(mf.uid),
		GID:     uint32(mf.gid),
	})
	report.attach(mountParts{protocol: atomfeed.Protocol, origin: feed.Origin, client: feed.Client(),
		fsys: fsys, follower: follower, blocks: blocks, count: cat.Len})
	mf.serveMetrics(cmd.Context(), report)
	server, err := mf.mountFS(dir, fsys, feed.Origin, mf.allowOther)
	if err != nil {
		blocks.Close()
		return nil, fmt.Errorf("mount %s: %w", dir, err)
	}
	return &mountedFS{fsys: fsys, server: server, feed: follower, cat: cat, blocks: blocks, stateDir: stateDir}, nil
}

// loadFeed rebuilds the feed's tree from its remembered state and catches
// up with one poll (a feed that cannot be reached is mounted as
// remembered, with a warning), or harvests it whole and remembers it.
func loadFeed(ctx context.Context, feed *atomfeed.Feed, stateDir string, opts atomfeed.FollowOptions) (*atomfeed.Follower, error) {
	data, err := remember.LoadFeed(stateDir)
	if err != nil {
		slog.Warn("feed state not used", "err", err)
	}
	if data != nil {
		start := time.Now()
		fl, err := feed.Restore(data, opts)
		if err == nil {
			if err := fl.Poll(ctx); err != nil {
				slog.Warn("the feed cannot be read; mounting what was remembered: cached files read, others fail with EIO", "err", err)
			}
			slog.Info("feed remembered and caught up", "files", fl.Catalog().Len(), "changes", fl.Stats().Applied,
				"took", time.Since(start).Round(time.Millisecond))
			return fl, nil
		}
		slog.Warn("feed state not used; harvesting the whole feed", "path", remember.FeedPath(stateDir), "err", err)
	}
	fl := feed.NewFollower(feed.NewCatalog(), opts)
	if err := fl.Load(ctx); err != nil {
		return nil, err
	}
	if data, err := fl.Snapshot(); err != nil {
		slog.Warn("feed state not saved", "err", err)
	} else if err := remember.SaveFeed(stateDir, data); err != nil {
		slog.Warn("feed state not saved", "err", err)
	}
	return fl, nil
}

// inspectFeed prints what the Atom-PMH feed discovery found publishes.
func inspectFeed(cmd *cobra.Command, sf *sourceFlags, rawURL string, found *source.FeedFound, asJSON bool) error {
	feed, err := openFeed(sf, rawURL, found)
	if err != nil {
		return err
	}
	rep, err := feed.Inspect(cmd.Context())
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(cmd, rep)
	}
	printFeedReport(cmd, rep)
	return nil
}

// runFeed follows a mounted feed until ctx ends; the channel closes when
// following has stopped and saved what it applied.
func (m *mountedFS) runFeed(ctx context.Context, mf *mountFlags) <-chan struct{} {
	if mf.notifyAddr != "" {
		slog.Warn("--notify-addr: an Atom-PMH feed has no notification channels; polling only")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.feed.Run(ctx)
	}()
	return done
}

func printJSON(cmd *cobra.Command, v any) error {
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printFeedReport(cmd *cobra.Command, rep *atomfeed.Report) {
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "Atom-PMH feed %s\n", rep.Feed)
	failed := 0
	for _, d := range rep.Documents {
		kind := "subscription"
		switch {
		case d.Complete:
			kind = "complete"
		case d.Archive:
			kind = "archive"
		}
		if d.Error != "" {
			failed++
			fmt.Fprintf(w, "  %-12s %s FAILED: %s (%d entries read)\n", kind, d.URL, d.Error, d.Entries)
			continue
		}
		fmt.Fprintf(w, "  %-12s %s (%d entries, updated %s)\n", kind, d.URL, d.Entries, timeOr(d.Updated, "unknown"))
	}
	fmt.Fprintf(w, "  documents:       %d", len(rep.Documents))
	if !rep.Whole {
		fmt.Fprint(w, " (the chain could not be read to its end)")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  records:         %d active\n", rep.Records)
	fmt.Fprintf(w, "  entries:         %d active, %d historical, %d deletion", rep.Active, rep.Historical, rep.Deletion)
	if rep.Other > 0 {
		fmt.Fprintf(w, ", %d of no kind the protocol defines (skipped)", rep.Other)
	}
	fmt.Fprintln(w)
	types := make([]string, 0, len(rep.Representations))
	for t := range rep.Representations {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range types {
		name := t
		if name == "" {
			name = "(no type)"
		}
		fmt.Fprintf(w, "  representations: %d %s\n", rep.Representations[t], name)
	}
	fmt.Fprintf(w, "  newest updated:  %s\n", timeOr(rep.NewestUpdated, "none"))
	for _, warn := range rep.Warnings {
		fmt.Fprintf(w, "  warning %s\n", warn)
	}
	if failed > 0 {
		fmt.Fprintf(w, "\n%d document(s) could not be read; the rest is reported above.\n", failed)
	}
}
