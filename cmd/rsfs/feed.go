package main

import (
	"github.com/spf13/cobra"

	"rsfs/atomfeed"
	"rsfs/atompmh"
	"rsfs/fetch"
)

// inspectFeed prints what the Atom-PMH feed discovery found publishes.
func inspectFeed(cmd *cobra.Command, sf *sourceFlags, rawURL string, found *fetch.Document, asJSON, strict bool) error {
	client, err := sf.client(rawURL)
	if err != nil {
		return err
	}
	feed, err := atomfeed.New(found.URL, atomfeed.Options{Client: client, Parse: atompmh.Options{MaxBytes: sf.maxDoc}, Discovered: found})
	if err != nil {
		return err
	}
	rep, err := feed.Inspect(cmd.Context())
	if err != nil {
		return err
	}
	write := rep.WriteText
	if asJSON {
		write = rep.WriteJSON
	}
	if err := write(cmd.OutOrStdout()); err != nil {
		return err
	}
	return strictExit(strict, len(rep.Warnings), rep.Unread())
}
