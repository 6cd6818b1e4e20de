package notify

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strings"
)

// SignatureHeader carries a delivery's HMAC: "method=hexdigest".
const SignatureHeader = "X-Hub-Signature"

var errBadSignature = errors.New("signature does not match")

// hashes are the X-Hub-Signature methods WebSub names.
var hashes = map[string]func() hash.Hash{
	"sha1":   sha1.New,
	"sha256": sha256.New,
	"sha384": sha512.New384,
	"sha512": sha512.New,
}

// Sign returns the X-Hub-Signature value for body under secret with method
// (sha1, sha256, sha384 or sha512).
func Sign(method, secret string, body []byte) (string, error) {
	newHash, ok := hashes[method]
	if !ok {
		return "", fmt.Errorf("notify: unknown signature method %q", method)
	}
	m := hmac.New(newHash, []byte(secret))
	m.Write(body)
	return method + "=" + hex.EncodeToString(m.Sum(nil)), nil
}

// checkSignature verifies header, an X-Hub-Signature value, against body.
func checkSignature(header, secret string, body []byte) error {
	if header == "" {
		return errors.New("no " + SignatureHeader)
	}
	method, digest, ok := strings.Cut(strings.TrimSpace(header), "=")
	if !ok {
		return fmt.Errorf("malformed %s %q", SignatureHeader, header)
	}
	method = strings.ToLower(method)
	newHash, known := hashes[method]
	if !known {
		return fmt.Errorf("unknown signature method %q", method)
	}
	got, err := hex.DecodeString(digest)
	if err != nil {
		return fmt.Errorf("malformed %s digest: %w", SignatureHeader, err)
	}
	m := hmac.New(newHash, []byte(secret))
	m.Write(body)
	if !hmac.Equal(got, m.Sum(nil)) {
		return errBadSignature
	}
	return nil
}
