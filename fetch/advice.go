package fetch

// Advice is what fetch's errors say would fix them, in the words of the
// program that uses it (its flags); fetch knows no flag. The zero value
// says what went wrong only.
type Advice struct {
	// AllowOrigin says how to allow an origin whose requests the policy
	// refuses ("--allow-host ORIGIN allows it").
	AllowOrigin func(origin string) string
	// SlowDown says how to send fewer requests to a Source that kept
	// refusing them as too many ("--max-rate sets a lower request rate").
	SlowDown string
	// Offline is what Options.Offline is called ("mounted --offline").
	Offline string
}

// allowHint is the advice for a request to rawURL the policy refused:
// " (ADVICE)"; "" for a URL with no http or https origin, which nothing
// allows, or without advice.
func (a Advice) allowHint(rawURL string) string {
	o, err := httpOrigin(rawURL)
	if err != nil || a.AllowOrigin == nil {
		return ""
	}
	return " (" + a.AllowOrigin(o) + ")"
}

// AllowAdvice says how to allow requests to origin, which the policy
// refuses (Advice.AllowOrigin); "" without advice.
func (c *Client) AllowAdvice(origin string) string {
	if c.opts.Advice.AllowOrigin == nil {
		return ""
	}
	return c.opts.Advice.AllowOrigin(origin)
}

// offline is what a Client made Offline is called.
func (a Advice) offline() string {
	if a.Offline == "" {
		return "offline by choice"
	}
	return a.Offline
}
