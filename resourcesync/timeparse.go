package resourcesync

import (
	"errors"
	"strings"
	"time"
)

// timeFlags records tolerated deviations from the W3C datetime profiles.
type timeFlags uint8

const (
	timeNoZone timeFlags = 1 << iota
	timeSpaceSeparator
)

func (f timeFlags) String() string {
	var parts []string
	if f&timeSpaceSeparator != 0 {
		parts = append(parts, "space instead of T")
	}
	if f&timeNoZone != 0 {
		parts = append(parts, "no time zone, UTC assumed")
	}
	return strings.Join(parts, "; ")
}

var errBadTime = errors.New("not a W3C datetime")

// ParseTime parses a W3C datetime (YYYY, YYYY-MM, YYYY-MM-DD, or a date with
// hh:mm, hh:mm:ss or hh:mm:ss.s and a zone Z or ±hh:mm) and returns it in
// UTC. A time without a zone is taken as UTC, and a space in place of the T
// is accepted; tolerated then describes the deviation.
func ParseTime(s string) (t time.Time, tolerated string, err error) {
	t, flags, err := parseTime(s)
	if err != nil {
		return time.Time{}, "", err
	}
	return t, flags.String(), nil
}

// timeParser walks a datetime string of either kind.
type timeParser[T ~string | ~[]byte] struct {
	s   T
	i   int
	bad bool
}

// digits reads exactly n decimal digits.
func (p *timeParser[T]) digits(n int) int {
	if p.i+n > len(p.s) {
		p.bad = true
		return 0
	}
	v := 0
	for k := p.i; k < p.i+n; k++ {
		c := p.s[k]
		if c < '0' || c > '9' {
			p.bad = true
			return 0
		}
		v = v*10 + int(c-'0')
	}
	p.i += n
	return v
}

// accept consumes c if it is next.
func (p *timeParser[T]) accept(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *timeParser[T]) done() bool { return p.i == len(p.s) }

func parseTime[T ~string | ~[]byte](s T) (time.Time, timeFlags, error) {
	s = trimSpace(s)
	if t, ok := parseUTCSeconds(s); ok {
		return t, 0, nil
	}
	p := &timeParser[T]{s: s}
	year, month, day := p.digits(4), 1, 1
	if !p.done() && p.accept('-') {
		month = p.digits(2)
		if !p.done() && p.accept('-') {
			day = p.digits(2)
		}
	}
	const fullDateLen = len("YYYY-MM-DD")
	if p.bad || (!p.done() && p.i != fullDateLen) {
		return time.Time{}, 0, errBadTime
	}
	if p.done() {
		return makeTime(year, month, day, 0, 0, 0, 0, 0)
	}
	var flags timeFlags
	switch {
	case p.accept('T'), p.accept('t'):
	case p.accept(' '):
		flags |= timeSpaceSeparator
	default:
		return time.Time{}, 0, errBadTime
	}
	return p.clock(year, month, day, flags)
}

// clock parses hh:mm[:ss[.s]] and the zone.
func (p *timeParser[T]) clock(year, month, day int, flags timeFlags) (time.Time, timeFlags, error) {
	hour := p.digits(2)
	if !p.accept(':') {
		return time.Time{}, 0, errBadTime
	}
	minute, sec, nsec := p.digits(2), 0, 0
	if p.accept(':') {
		sec = p.digits(2)
		if p.accept('.') {
			nsec = p.fraction()
		}
	}
	offset := 0
	switch {
	case p.done():
		flags |= timeNoZone
	case p.accept('Z'), p.accept('z'):
	case p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-'):
		sign := 1
		if p.s[p.i] == '-' {
			sign = -1
		}
		p.i++
		zh := p.digits(2)
		if !p.accept(':') {
			return time.Time{}, 0, errBadTime
		}
		zm := p.digits(2)
		if zh > 23 || zm > 59 {
			return time.Time{}, 0, errBadTime
		}
		offset = sign * (zh*3600 + zm*60)
	}
	if p.bad || !p.done() || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, 0, errBadTime
	}
	t, _, err := makeTime(year, month, day, hour, minute, sec, nsec, offset)
	return t, flags, err
}

// fraction reads one or more digits of a fraction of a second, keeping
// nanoseconds.
func (p *timeParser[T]) fraction() int {
	start, ns := p.i, 0
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		if p.i-start < 9 {
			ns = ns*10 + int(p.s[p.i]-'0')
		}
		p.i++
	}
	n := p.i - start
	if n == 0 {
		p.bad = true
	}
	for ; n < 9; n++ {
		ns *= 10
	}
	return ns
}

func makeTime(year, month, day, hour, minute, sec, nsec, offset int) (time.Time, timeFlags, error) {
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) {
		return time.Time{}, 0, errBadTime
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	return t.Add(-time.Duration(offset) * time.Second), 0, nil
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func trimSpace[T ~string | ~[]byte](s T) T {
	i, j := 0, len(s)
	for i < j && isSpaceByte(s[i]) {
		i++
	}
	for j > i && isSpaceByte(s[j-1]) {
		j--
	}
	return s[i:j]
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

// parseUTCSeconds parses the most common form, YYYY-MM-DDThh:mm:ssZ,
// without the general parser. It reports false for any other form, and for
// an invalid date or time, which the general parser then rejects.
func parseUTCSeconds[T ~string | ~[]byte](s T) (time.Time, bool) {
	if len(s) != len("2006-01-02T15:04:05Z") || s[4] != '-' || s[7] != '-' || s[10] != 'T' ||
		s[13] != ':' || s[16] != ':' || s[19] != 'Z' {
		return time.Time{}, false
	}
	y1, ok1 := twoDigits(s, 0)
	y2, ok2 := twoDigits(s, 2)
	month, ok3 := twoDigits(s, 5)
	day, ok4 := twoDigits(s, 8)
	hour, ok5 := twoDigits(s, 11)
	minute, ok6 := twoDigits(s, 14)
	sec, ok7 := twoDigits(s, 17)
	year := y1*100 + y2
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) || month < 1 || month > 12 || day < 1 ||
		day > daysInMonth(year, month) || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	secs := daysSinceEpoch(year, month, day)*86400 + int64(hour*3600+minute*60+sec)
	return time.Unix(secs, 0).UTC(), true
}

// twoDigits reads the decimal digits s[i] and s[i+1].
func twoDigits[T ~string | ~[]byte](s T, i int) (int, bool) {
	a, b := s[i]-'0', s[i+1]-'0'
	return int(a)*10 + int(b), a <= 9 && b <= 9
}

func daysInMonth(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysSinceEpoch is the number of days from 1970-01-01 to a proleptic
// Gregorian date (Howard Hinnant's days_from_civil).
func daysSinceEpoch(year, month, day int) int64 {
	y := int64(year)
	if month <= 2 {
		y--
	}
	era := y / 400 // rounded down below
	if y < 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	m := int64(month)
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + int64(day) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}
