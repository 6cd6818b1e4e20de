package fetch

import (
	"fmt"
	"strconv"
	"strings"
)

// contentRange is a parsed Content-Range: "bytes first-last/total",
// "bytes first-last/*" (total -1) or "bytes */total" (first and last -1).
type contentRange struct {
	first, last, total int64
}

func parseContentRange(value string) (contentRange, error) {
	cr := contentRange{first: -1, last: -1, total: -1}
	unit, spec, ok := strings.Cut(strings.TrimSpace(value), " ")
	if !ok || !strings.EqualFold(unit, "bytes") {
		return cr, fmt.Errorf("Content-Range %q: not a byte range", value)
	}
	span, total, ok := strings.Cut(strings.TrimSpace(spec), "/")
	if !ok {
		return cr, fmt.Errorf("Content-Range %q: no total", value)
	}
	if total != "*" {
		t, err := strconv.ParseInt(total, 10, 64)
		if err != nil || t < 0 {
			return cr, fmt.Errorf("Content-Range %q: bad total", value)
		}
		cr.total = t
	}
	if span == "*" {
		if cr.total < 0 {
			return cr, fmt.Errorf("Content-Range %q: neither range nor total", value)
		}
		return cr, nil
	}
	first, last, ok := strings.Cut(span, "-")
	f, err1 := strconv.ParseInt(first, 10, 64)
	l, err2 := strconv.ParseInt(last, 10, 64)
	if !ok || err1 != nil || err2 != nil || f < 0 || l < f || (cr.total >= 0 && l >= cr.total) {
		return cr, fmt.Errorf("Content-Range %q: bad range", value)
	}
	cr.first, cr.last = f, l
	return cr, nil
}

// rangeHeader is the Range value for bytes [off, off+n), n < 0 meaning to the end.
func rangeHeader(off, n int64) string {
	if n < 0 {
		return fmt.Sprintf("bytes=%d-", off)
	}
	return fmt.Sprintf("bytes=%d-%d", off, off+n-1)
}
