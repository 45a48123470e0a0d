package config

import "strings"

// maxCandidateID is the longest candidate id of the elections API.
const maxCandidateID = 64

// candidateFromHostname is the hostname as a candidate id of the elections API: every byte
// outside [A-Za-z0-9._:@-] replaced by '-', at most 64 of them.
func candidateFromHostname(s string) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < maxCandidateID; i++ {
		switch c := s[i]; {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', strings.IndexByte("._:@-", c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}
