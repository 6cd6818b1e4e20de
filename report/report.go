// Package report holds what rsfs's reports share, rendered for a person
// or for a script: sizes and counts as a person reads them, and the
// indented JSON of every --json. Each report renders itself in its own
// package (source, atomfeed, audit, status) with these.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"
)

// JSON writes v as indented JSON (two spaces), ending in a newline.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// IndentJSON writes data, JSON that another process wrote (a mount's
// status), as JSON writes it: indented, ending in a newline, every field
// kept, those this binary does not know included.
func IndentJSON(w io.Writer, data []byte) error {
	var out bytes.Buffer
	if err := json.Indent(&out, data, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err := w.Write(out.Bytes())
	return err
}

// units are the binary units Size writes, above bytes.
const units = "KMGTPE"

// Size is n bytes in the largest binary unit that keeps it at least 1, to
// a tenth: "512 B", "3.6 MiB".
func Size(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/1024, 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, units[i])
}

// ExactSize is n bytes exactly, then as Size says it: "5368709121 bytes,
// 5.0 GiB"; "1023 B" below a KiB.
func ExactSize(n int64) string {
	if n < 1024 {
		return Size(n)
	}
	return fmt.Sprintf("%d bytes, %s", n, Size(n))
}

// SizeIn is n in the unit Size picks for of, without the unit: "3.6" of
// "6.9 MiB", for "3.6/6.9 MiB".
func SizeIn(n, of int64) string {
	if of < 1024 {
		return strconv.FormatInt(n, 10)
	}
	div := 1024.0
	for v := float64(of) / 1024; v >= 1024; v /= 1024 {
		div *= 1024
	}
	return fmt.Sprintf("%.1f", float64(n)/div)
}

// Thousands writes n with a comma between each group of three digits:
// "40,000".
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return sign + s
}

// Time is t in UTC, RFC 3339 to the fraction of a second it has, or none
// when there is no t.
func Time(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// Writer keeps the first error of the writer under it, so that a renderer
// writes its lines on and says that error once, at the end (Err).
type Writer struct {
	w   io.Writer
	err error
}

// NewWriter writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

func (e *Writer) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// Err is the first error a write met; nil if none did.
func (e *Writer) Err() error { return e.err }
