package cmdutil

import (
	"errors"
	"testing"
)

// TestExitCode: 2 for a command line the tool does not take (a flag error, cobra's unknown
// command and argument counts), 1 for any other error.
func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("release: the work tree is not clean"), 1},
		{&UsageError{Err: errors.New("unknown flag: --bogus")}, 2},
		{errors.New(`unknown command "cutt" for "release"`), 2},
		{errors.New("accepts 1 arg(s), received 0"), 2},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
