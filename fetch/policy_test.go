package fetch

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPolicyMirrors: a mirror is remembered for the snapshot when the
// Source's naming it is what allows it, once, in the order met; a saved
// mirror is remembered even when something else allows it this time (else
// the next snapshot would lose it); a URL with no http origin allows
// nothing.
func TestPolicyMirrors(t *testing.T) {
	c := New(Options{CredentialOrigin: "https://source.example", Logger: fastOptions().Logger})
	p := c.Policy()
	c.AllowOrigin("https://allowed.example")

	assert.Equal(t, "https://mirror.example", p.Admit("HTTPS://Mirror.example/a", ReasonMirror))
	p.Admit("https://mirror.example/b", ReasonMirror)
	p.Admit("https://source.example/c", ReasonMirror)
	p.Admit("https://allowed.example/d", ReasonMirror)
	p.Admit("https://doc.example/list.xml", ReasonDocument)
	p.Admit("https://doc.example/e", ReasonMirror)
	assert.Empty(t, p.Admit("ftp://mirror2.example/f", ReasonMirror))
	assert.Empty(t, p.Admit("/relative", ReasonMirror))
	assert.Equal(t, []string{"https://mirror.example"}, p.Mirrors())

	p.Admit("https://allowed.example", ReasonSavedMirror)
	p.Admit("https://mirror.example", ReasonSavedMirror)
	p.Admit("https://saved.example", ReasonSavedMirror)
	assert.Equal(t, []string{"https://mirror.example", "https://allowed.example", "https://saved.example"}, p.Mirrors())

	for _, u := range []string{"https://mirror.example/x", "https://doc.example/x", "https://saved.example/x", "https://source.example/x"} {
		assert.True(t, p.Allows(u), u)
	}
	for _, u := range []string{"ftp://mirror2.example/x", "http://mirror.example/x", "https://other.example/x"} {
		assert.False(t, p.Allows(u), u)
	}
}

// TestPolicyCredentialsGoToTheirOriginOnly: whatever else the policy
// allows, and for whatever reason, only the credential origin gets the
// credentials; a client without a credential origin sends none.
func TestPolicyCredentialsGoToTheirOriginOnly(t *testing.T) {
	creds := http.Header{"Authorization": {"Bearer s3cret"}}
	c := New(Options{CredentialOrigin: "https://source.example:8443/path", Headers: creds, Logger: fastOptions().Logger})
	p := c.Policy()
	c.AllowOrigin("allowed.example")
	p.Admit("https://given.example/", ReasonGiven)
	p.Admit("https://doc.example/", ReasonDocument)
	p.Admit("https://mirror.example/", ReasonMirror)
	p.Admit("https://saved.example/", ReasonSavedMirror)
	p.Admit("https://user:pw@source.example:8443/", ReasonSource)

	got, ok := p.consult("https://SOURCE.example:8443/x")
	assert.True(t, ok)
	assert.Equal(t, creds, got)
	got, ok = p.consult("https://user:pw@source.example:8443/x")
	assert.True(t, ok, "user information is no part of the origin")
	assert.Equal(t, creds, got)
	for _, u := range []string{"https://allowed.example/", "http://allowed.example/", "https://given.example/",
		"https://doc.example/", "https://mirror.example/", "https://saved.example/", "https://source.example/", "http://source.example:8443/"} {
		got, _ := p.consult(u)
		assert.Nil(t, got, u)
	}
	c.AllowAnyOrigin()
	got, ok = p.consult("https://anywhere.example/")
	assert.True(t, ok)
	assert.Nil(t, got)

	none := New(Options{Logger: fastOptions().Logger})
	none.AllowOrigin("https://source.example:8443")
	got, ok = none.Policy().consult("https://source.example:8443/x")
	assert.True(t, ok)
	assert.Nil(t, got)
}

// TestPolicyRefusalLogsNoUserinfo: a document or mirror on another scheme
// is refused and logged by its origin, never by its URL, whose user
// information may be a password.
func TestPolicyRefusalLogsNoUserinfo(t *testing.T) {
	var logged bytes.Buffer
	c := New(Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	assert.Empty(t, c.Policy().Admit("ftp://user:s3cret@mirror.example/f", ReasonMirror))
	assert.Contains(t, logged.String(), "ftp://mirror.example")
	assert.NotContains(t, logged.String(), "s3cret")
	assert.False(t, c.Allowed("ftp://mirror.example/f"))
	assert.Empty(t, c.Policy().Mirrors())
}

// TestRefusedRequestNamesTheFlag: a request to an origin the policy does
// not allow, directly or by a redirect, fails with ErrNotAllowed and names
// the --allow-host that would allow it.
func TestRefusedRequestNamesTheFlag(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("x")) }))
	t.Cleanup(other.Close)
	redirect := httptest.NewServer(http.RedirectHandler(other.URL+"/x", http.StatusFound))
	t.Cleanup(redirect.Close)
	c := New(Options{CredentialOrigin: redirect.URL, Logger: fastOptions().Logger, Retries: -1,
		Advice: Advice{AllowOrigin: func(o string) string { return "--allow-host " + o + " allows it" }}})
	for _, u := range []string{other.URL + "/x", redirect.URL + "/moved"} {
		_, err := c.Get(context.Background(), u, nil)
		assert.ErrorIs(t, err, ErrNotAllowed, u)
		assert.ErrorContains(t, err, "host not allowed (--allow-host "+other.URL+" allows it)", u)
	}
}
