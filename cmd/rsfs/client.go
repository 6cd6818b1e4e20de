package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"rsfs/fetch"
	"rsfs/origin"
	"rsfs/report"
	"rsfs/resourcesync"
	"rsfs/source"
)

// sourceFlags are the flags of every command that reads a Source.
type sourceFlags struct {
	headers    []string
	bearerEnv  string
	allowHosts []string
	timeout    time.Duration
	minRate    string
	retries    int
	maxDoc     int64
	parallel   int
	caCert     string
	clientCert string
	clientKey  string
	maxRate    float64
	bwlimit    string
	userAgent  string
	// offlineWait, set by mount only, keeps the Source's offline state
	// (fetch.Options.OfflineWait).
	offlineWait time.Duration
	offline     bool // mount --offline: the client sends nothing
}

func (f *sourceFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVar(&f.headers, "header", nil, `extra request header "Name: value" (e.g. credentials), sent only to the origin of the URL given; repeatable`)
	fl.StringVar(&f.bearerEnv, "bearer-token-env", "", "name of an environment variable holding a bearer token sent to the origin of the URL given")
	fl.StringArrayVar(&f.allowHosts, "allow-host", nil, "also fetch from this origin (scheme://host[:port]); repeatable")
	fl.DurationVar(&f.timeout, "timeout", 30*time.Second, "HTTP timeout per attempt: for the response headers, and for each wait on body bytes")
	fl.StringVar(&f.minRate, "min-rate", "1KiB", "slowest transfer accepted, in bytes per second averaged over --timeout (a slower body is retried like a stalled one); 0: no minimum")
	fl.IntVar(&f.retries, "retries", 4, "retries on timeouts, resets and 5xx")
	fl.Int64Var(&f.maxDoc, "max-doc-size", resourcesync.DefaultMaxBytes, "largest ResourceSync document accepted, in bytes after decompression")
	fl.IntVar(&f.parallel, "parallel", 4, "Resource Lists fetched and parsed at once")
	fl.StringVar(&f.caCert, "ca-cert", "", "PEM file of CA certificates trusted for HTTPS besides the system's (a Source behind a private CA)")
	fl.StringVar(&f.clientCert, "client-cert", "", "PEM file of the client certificate (and its chain) for mutual TLS; with --client-key")
	fl.StringVar(&f.clientKey, "client-key", "", "PEM file of the private key of --client-cert")
	fl.Float64Var(&f.maxRate, "max-rate", 0, "at most this many requests a second to each origin (0: as many as the Source accepts; rsfs slows down by itself on 429 and 503)")
	fl.StringVar(&f.bwlimit, "bwlimit", "0", "at most this many response bytes a second, across all origins (e.g. 1MiB; 0: no limit)")
	fl.StringVar(&f.userAgent, "user-agent", "", "the User-Agent of every request (default rsfs/VERSION (+URL)); name a contact, as a good crawler does")
}

// client builds the HTTP client for the Source at rawURL.
func (f *sourceFlags) client(rawURL string) (*fetch.Client, error) {
	if err := checkSourceURL(rawURL); err != nil {
		return nil, err
	}
	credOrigin, err := origin.Of(rawURL)
	if err != nil {
		return nil, asUsage(err)
	}
	headers := http.Header{}
	for _, h := range f.headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			return nil, fmt.Errorf("--header %q: want \"Name: value\"", h)
		}
		headers.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	if f.bearerEnv != "" {
		tok := os.Getenv(f.bearerEnv)
		if tok == "" {
			return nil, fmt.Errorf("--bearer-token-env: $%s is empty", f.bearerEnv)
		}
		headers.Set("Authorization", "Bearer "+tok)
	}
	retries := f.retries
	if retries == 0 {
		retries = -1 // fetch reads 0 as "the default"
	}
	minRate, err := report.ParseSize(f.minRate)
	if err != nil {
		return nil, fmt.Errorf("--min-rate: %w", err)
	}
	if minRate == 0 {
		minRate = -1 // fetch reads 0 as "the default"
	}
	tlsConfig, err := f.tlsConfig()
	if err != nil {
		return nil, err
	}
	bwlimit, err := report.ParseSize(f.bwlimit)
	if err != nil {
		return nil, fmt.Errorf("--bwlimit: %w", err)
	}
	client := fetch.New(fetch.Options{
		Timeout:          f.timeout,
		MinRate:          minRate,
		Retries:          retries,
		Headers:          headers,
		CredentialOrigin: credOrigin,
		TLSClientConfig:  tlsConfig,
		MaxRate:          f.maxRate,
		BandwidthLimit:   bwlimit,
		UserAgent:        f.userAgent,
		OfflineWait:      f.offlineWait,
		Offline:          f.offline,
		Advice:           fetchAdvice(),
	})
	for _, h := range f.allowHosts {
		client.AllowOrigin(h)
	}
	return client, nil
}

// fetchAdvice is what fetch's errors say would fix them, in rsfs's flags.
func fetchAdvice() fetch.Advice {
	return fetch.Advice{
		AllowOrigin: func(o string) string { return "--allow-host " + o + " allows it" },
		SlowDown:    "--max-rate sets a lower request rate",
		Offline:     "mounted --offline",
	}
}

// tlsConfig is the TLS configuration of --ca-cert, --client-cert and
// --client-key (fetch.TLSConfig); nil without them.
func (f *sourceFlags) tlsConfig() (*tls.Config, error) {
	cfg, err := fetch.TLSConfig(f.caCert, f.clientCert, f.clientKey)
	var te *fetch.TLSFileError
	switch {
	case errors.Is(err, fetch.ErrNoPEM):
		return nil, fmt.Errorf("--ca-cert %s: %w", f.caCert, fetch.ErrNoPEM)
	case errors.As(err, &te) && te.CA:
		return nil, fmt.Errorf("--ca-cert: %w", te.Err)
	case errors.As(err, &te):
		return nil, fmt.Errorf("--client-cert, --client-key: %w", te.Err)
	case f.clientCert != "" && f.clientKey == "":
		return nil, usagef("--client-cert needs --client-key")
	case f.clientKey != "" && f.clientCert == "":
		return nil, usagef("--client-key needs --client-cert")
	}
	return cfg, nil
}

func (f *sourceFlags) sourceOptions(client *fetch.Client) source.Options {
	return source.Options{
		Client:   client,
		Parse:    resourcesync.Options{MaxBytes: f.maxDoc},
		Parallel: f.parallel,
	}
}
