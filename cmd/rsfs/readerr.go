package main

import (
	"rsfs/cache"
	"rsfs/fetch"
	"rsfs/origin"
)

// explainRead is fs.Config.ExplainRead: why a read of uri failed with err
// (fetch.Cause), and the flag that would fix it.
func explainRead(uri string, err error) (cause, fix string) {
	return fetch.Cause(uri, err), remedyText(uri, fetch.RemedyOf(err))
}

// remedyText words a remedy for the read of uri in rsfs's flags.
func remedyText(uri string, r fetch.Remedy) string {
	switch r {
	case fetch.AllowHost:
		if o, err := origin.Of(uri); err == nil {
			return "mount with --allow-host " + o + " if that host is to be trusted"
		}
		return "mount with --allow-host for the resource's host"
	case fetch.Credentials:
		return "pass credentials with --header or --bearer-token-env"
	case fetch.SlowDown:
		return "the Source kept refusing it as too many requests after every retry: mount with a lower --max-rate (rsfs slowed down already; --max-rate starts lower), or try again"
	case fetch.WhileOnline:
		return "the Source does not answer: files on disk are still served, and the polls keep trying; 'rsfs warm' fetches files to disk ahead while the Source answers"
	case fetch.LongerTimeout:
		return "the host did not answer within --timeout: raise it, or try again"
	}
	return ""
}

// warmError words the error of a warm job (which the mount sends as text)
// in rsfs's flags.
func warmError(msg string) string {
	if msg == cache.ErrNoDisk.Error() {
		return msg + " (--cache-dir none, or --cache-max-size 0)"
	}
	return msg
}
