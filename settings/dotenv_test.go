package settings_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/settings"
)

func TestParseDotEnvReadsTheDotenvFormat(t *testing.T) {
	data := "\uFEFF# a comment\r\n" +
		"PLAIN=value\r\n" +
		"   \n" +
		"export EXPORTED = spaced out  # a comment\n" +
		"YAML: colon\n" +
		"HASH=a#b\n" +
		"SINGLE='as $PLAIN is \\n' # after\n" +
		"DOUBLE=\"line\\nbreak \\\"quoted\\\" $PLAIN ${YAML} \\$PLAIN\"\n" +
		"MULTI=\"first\n" +
		"second\"\n" +
		"UNQUOTED=$PLAIN/${HASH}-$missing-$-\\$PLAIN\n" +
		"EMPTY=\n" +
		"PLAIN=again\n"
	got, err := settings.ParseDotEnv(".env", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := []settings.Assignment{
		{Name: "PLAIN", Value: "value", Line: 2},
		{Name: "EXPORTED", Value: "spaced out", Line: 4},
		{Name: "YAML", Value: "colon", Line: 5},
		{Name: "HASH", Value: "a#b", Line: 6},
		{Name: "SINGLE", Value: `as $PLAIN is \n`, Line: 7},
		{Name: "DOUBLE", Value: "line\nbreak \"quoted\" value colon $PLAIN", Line: 8},
		{Name: "MULTI", Value: "first\nsecond", Line: 9},
		{Name: "UNQUOTED", Value: "value/a#b-$missing-$-$PLAIN", Line: 11},
		{Name: "EMPTY", Value: "", Line: 12},
		{Name: "PLAIN", Value: "again", Line: 13},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d assignments %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("assignment %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// A line that is not an assignment is a *SyntaxError with the file and the line, and nothing of
// the file's text.
func TestParseDotEnvNamesTheLineNeverTheText(t *testing.T) {
	const secret = "s3cr3tV4lue"
	for _, tc := range []struct {
		name, data string
		line       int
		problem    string
	}{
		{"unterminated double quote", "A=1\nKEY=\"" + secret + "\nB=" + secret + "\n", 2, "never closed"},
		{"unterminated single quote", "KEY='" + secret + "\n", 1, "never closed"},
		{"text after the quote", "A=1\n\nKEY=\"" + secret + "\" " + secret + "\n", 3, "text follows the closing quote"},
		{"text after a multi-line quote", "KEY='a\n" + secret + "' " + secret + "\n", 2, "text follows the closing quote"},
		{"no assignment", "# x\n" + secret + " " + secret + "\n", 2, "not NAME=VALUE"},
		{"not a name", "\uFEFF=" + secret + "\n", 1, "not NAME=VALUE"},
		{"a second byte order mark", "\uFEFF\uFEFFKEY=" + secret + "\n", 1, "not NAME=VALUE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := settings.ParseDotEnv("/repo/.env", []byte(tc.data))
			var se *settings.SyntaxError
			if !errors.As(err, &se) || se.Path != "/repo/.env" || se.Line != tc.line || !strings.Contains(se.Problem, tc.problem) {
				t.Fatalf("error %v (%T), want a *SyntaxError of /repo/.env line %d: %s", err, err, tc.line, tc.problem)
			}
			if !strings.HasPrefix(err.Error(), "/repo/.env line ") {
				t.Errorf("message %q does not start with the file and the line", err)
			}
			if strings.Contains(err.Error(), secret[:4]) {
				t.Errorf("message %q quotes the file", err)
			}
		})
	}
}
