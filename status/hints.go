package status

// Hints are the flags of the program that shows a status, which its texts
// name where one would change what they say ("off (--poll-interval 0)").
// status knows no flag: cmd/rsfs gives them, to Report.WriteText and to
// Mount (whose report's Fix names them). The zero value names none.
type Hints struct {
	// NoFollow is the setting that turns following off ("--poll-interval 0").
	NoFollow string
	// NoDisk is the setting that turns the disk cache off ("--cache-dir none").
	NoDisk string
	// MaxRate is the flag that caps the requests a second to an origin
	// ("--max-rate").
	MaxRate string
	// Offline is the flag that mounts without asking the Source anything
	// ("--offline").
	Offline string
	// Timeout is the flag that sets how long the Source has to answer
	// ("--timeout").
	Timeout string
}

// paren is " (s)", or "" for no s.
func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
