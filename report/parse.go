package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// This file reads back what a person types: sizes and ages.

// ParseSize reads a byte count: a number with an optional unit (K, M, G, T,
// with or without "iB"/"B"; all powers of 1024).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	upper := strings.ToUpper(t)
	upper = strings.TrimSuffix(strings.TrimSuffix(upper, "B"), "I")
	mult := int64(1)
	if n := len(upper); n > 0 {
		switch upper[n-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult != 1 {
			upper = upper[:n-1]
		}
	}
	v, err := strconv.ParseInt(strings.TrimSpace(upper), 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a size (e.g. 256MiB)", s)
	}
	if v > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is too large (the most is 8EiB)", s)
	}
	return v * mult, nil
}

// SizeArg writes n bytes as ParseSize reads them.
func SizeArg(n int64) string {
	for _, u := range []struct {
		shift int
		name  string
	}{{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d", n)
}

// ParseAge reads a duration that may also be given in days ("30d") or
// weeks ("2w"), as time.ParseDuration does not.
func ParseAge(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(t, suffix); ok {
			v, err := strconv.ParseFloat(n, 64)
			if err != nil || v < 0 {
				return 0, fmt.Errorf("%q is not an age (e.g. 30d, 12h)", s)
			}
			return time.Duration(v * float64(unit)), nil
		}
	}
	d, err := time.ParseDuration(t)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not an age (e.g. 30d, 12h)", s)
	}
	return d, nil
}
