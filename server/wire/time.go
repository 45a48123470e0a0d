package wire

import "time"

// TimeLayout is the contract's timestamp: RFC 3339, UTC, milliseconds, "Z".
const TimeLayout = "2006-01-02T15:04:05.000Z"

// Time is t in the contract's timestamp. Every campaign and renewal answers with one (the
// lease's expires_at), and time.Format reads its layout anew on every call, a few percent of a
// request's CPU: the digits are written here directly, as Format writes them for the years of
// four digits; other years go to Format.
func Time(t time.Time) string {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.Format(TimeLayout)
	}
	hour, minute, second := t.Clock()
	b := [len(TimeLayout)]byte{4: '-', 7: '-', 10: 'T', 13: ':', 16: ':', 19: '.', 23: 'Z'}
	putDigits(b[0:4], year)
	putDigits(b[5:7], int(month))
	putDigits(b[8:10], day)
	putDigits(b[11:13], hour)
	putDigits(b[14:16], minute)
	putDigits(b[17:19], second)
	putDigits(b[20:23], t.Nanosecond()/int(time.Millisecond)) // truncated, as Format's .000
	return string(b[:])
}

// putDigits writes v, which is at least 0, in decimal into all of b, zero-padded on the left.
func putDigits(b []byte, v int) {
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
}
