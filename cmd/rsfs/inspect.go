package main

import (
	"github.com/spf13/cobra"

	"rsfs/changes"
	"rsfs/discover"
	"rsfs/protocol"
)

func inspectCmd() *cobra.Command {
	var sf sourceFlags
	var asJSON, strict bool
	cmd := &cobra.Command{
		Use:   "inspect URL",
		Short: "Show what a ResourceSync Source publishes, and where it departs from the standard",
		Long: `inspect discovers the Source at URL (a site, or the URL of any ResourceSync
document) and prints, for each resource set, its Capability List, the
documents of each capability, the number of resources and their total size,
the dump packages, the Change List, the notification channels and how a
mount would follow the set. A document that cannot be read is reported on
its own line (FAILED) and the others are read; inspect exits non-zero only
when nothing could be discovered.

inspect is also a validator: every deviation from ResourceSync 1.1
(ANSI/NISO Z39.99-2017) that rsfs tolerates is listed once per document,
as a warning line that gives the document and line, the deviation, the
clause it departs from in [brackets] and how rsfs read it; these are the
warnings a mount logs. With --strict, inspect exits 1 when it lists any
deviation, a document or dump package could not be read or a manifest
names a member its package lacks, and 0 when there is none: a
publisher's CI can run 'rsfs inspect --strict URL' (or with --json, whose
"deviations" counts them).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := sf.validate(); err != nil {
				return err
			}
			client, err := sf.client(args[0])
			if err != nil {
				return err
			}
			opts := sf.sourceOptions(client)
			opts.Partial = true
			found, err := discover.At(cmd.Context(), args[0], opts)
			if err != nil {
				return err
			}
			if found.Protocol() == protocol.AtomPMH {
				return inspectFeed(cmd, &sf, args[0], found.Feed, asJSON, strict)
			}
			rep, err := changes.Inspect(cmd.Context(), found.Source)
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
			return strictExit(strict, rep.Deviations, rep.Unread()+rep.BadPackages())
		},
	}
	sf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().BoolVar(&strict, "strict", false, "exit 1 when any deviation from the standard is listed, or a document or dump package could not be read")
	return cmd
}

// strictExit is inspect's end: with --strict, exit status 1 (the report
// has said why) when it listed deviations or documents it could not read.
func strictExit(strict bool, deviations, unread int) error {
	if strict && deviations+unread > 0 {
		return exitWith(exitFailure, nil)
	}
	return nil
}
