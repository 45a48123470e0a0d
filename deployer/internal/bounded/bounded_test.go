package bounded

import "testing"

func TestBufferKeepsTheFirstBytes(t *testing.T) {
	b := &Buffer{Limit: 4}
	for _, s := range []string{"ab", "cdef", "gh"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v: a writer must take it all", s, n, err)
		}
	}
	if b.Kept() != "abcd" || !b.Truncated() || b.String() != "abcd… (4 more bytes)" {
		t.Errorf("kept %q, string %q", b.Kept(), b.String())
	}
}
