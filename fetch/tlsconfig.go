package fetch

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
)

// ErrNoPEM is TLSConfig's error for a CA file with no PEM certificate in it.
var ErrNoPEM = errors.New("no PEM certificate in it")

// TLSFileError is a file of TLSConfig that could not be read: the CA file
// (CA), else the client certificate and key.
type TLSFileError struct {
	CA  bool
	Err error
}

func (e *TLSFileError) Error() string { return e.Err.Error() }
func (e *TLSFileError) Unwrap() error { return e.Err }

// TLSConfig is the TLS configuration of a CA file (PEM certificates
// trusted beside the system's roots, or alone where there are none) and a
// client certificate and its key (both, or neither is used); nil (Go's
// defaults: the system's roots, no client certificate) with no file.
func TLSConfig(caCert, clientCert, clientKey string) (*tls.Config, error) {
	if caCert == "" && clientCert == "" && clientKey == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caCert != "" {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool() // no system roots: the given ones alone
		}
		pem, err := os.ReadFile(caCert)
		if err != nil {
			return nil, &TLSFileError{CA: true, Err: err}
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &TLSFileError{CA: true, Err: ErrNoPEM}
		}
		cfg.RootCAs = pool
	}
	if clientCert != "" && clientKey != "" {
		cert, err := tls.LoadX509KeyPair(clientCert, clientKey)
		if err != nil {
			return nil, &TLSFileError{Err: err}
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
