package filestore

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseHeader checks parseHeader against the parser it replaced (strings.Fields and
// strconv): whatever it accepts the old one accepted with the same values, and it accepts every
// line the old one did that is spelled as the store writes headers — single spaces, no signs.
func FuzzParseHeader(f *testing.F) {
	for _, s := range []string{"lfp-swarm-lease-rooms-slot 1 17 230 0a1b2c3d", "lfp-swarm-lease-rooms-slot 1 18446744073709551615 0 ffffffff",
		"lfp-swarm-lease-rooms-slot 1 18446744073709551616 0 0", "lfp-swarm-lease-rooms-slot 2 1 1 1", "lfp-swarm-lease-rooms-slot  1 1 1 1",
		"lfp-swarm-lease-rooms-slot 1 1 +1 1", "lfp-swarm-lease-rooms-slot 1 1 1 1 1", "lfp-swarm-lease-rooms-slot 1 1 1 123456789", "lfp-swarm-lease-rooms-slot 1 000000000000000000000007 0 0000000ff", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		got, why := parseHeader([]byte(line))
		want, oldOK := oldParseHeader(line)
		switch {
		case why == "" && (!oldOK || got != want):
			t.Fatalf("parseHeader(%q) = %+v, the old parser %+v (ok %v)", line, got, want, oldOK)
		case why != "" && oldOK && !strings.ContainsAny(line, "+-\t\n\v\f\r\u0085\u00a0") && !strings.Contains(line, "  ") &&
			strings.TrimSpace(line) == line && utf8.ValidString(line) && strings.Join(strings.Fields(line), " ") == line:
			t.Fatalf("parseHeader(%q) refused it (%s), the old parser read %+v", line, why, want)
		}
	})
}

func oldParseHeader(line string) (slotHeader, bool) {
	fields := strings.Fields(line)
	if len(fields) != 5 || fields[0] != slotMagic || fields[1] != "1" {
		return slotHeader{}, false
	}
	version, err1 := strconv.ParseUint(fields[2], 10, 64)
	length, err2 := strconv.Atoi(fields[3])
	sum, err3 := strconv.ParseUint(fields[4], 16, 32)
	if err1 != nil || err2 != nil || err3 != nil || length < 0 {
		return slotHeader{}, false
	}
	return slotHeader{version: version, length: length, sum: uint32(sum)}, true
}
