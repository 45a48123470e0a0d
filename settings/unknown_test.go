package settings_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/settings"
)

func TestWarnings(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prefix  string
		environ []string
		want    []string // one substring per expected warning, in order
	}{
		{"misspelt setting", "APP", []string{"APP_NAM=x"}, []string{"APP_NAM is not a setting and is ignored; the closest is APP_NAME (APP_FENCE and APP_TEST_* are reserved and never warned about)"}},
		{"misspelt _FILE", "APP", []string{"APP_TTL_SM_FILE=/x"}, []string{"the closest is APP_TTL_MS_FILE "}},
		{"another prefix", "SVC", []string{"SVC_TOKN=a", "APP_NAM=x"}, []string{"SVC_TOKN is not a setting and is ignored; the closest is SVC_TOKEN "}},
		{"settings and their files", "APP", []string{"APP_NAME=a", "APP_TOKEN_FILE=/x"}, nil},
		{"reserved", "APP", []string{"APP_FENCE=1", "APP_TEST_DOCKER_HOST=unix:///x", "APP_TEST_=y"}, nil},
		{"other variables", "APP", []string{"APPX=1", "APP=1", "PATH=/bin", "XAPP_NAM=1"}, nil},
		{"two, sorted", "APP", []string{"APP_TTL=1", "APP_LIMT=x"}, []string{"APP_LIMT ", "APP_TTL is not a setting and is ignored; the closest is APP_TTL_MS "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := schema()
			s.Prefix = tc.prefix
			env, _ := s.Environment(environ(tc.environ...)) // the warnings do not depend on the files
			got := s.Warnings(env)
			if len(got) != len(tc.want) {
				t.Fatalf("warnings %q, want %d", got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %q, want it to contain %q", got[i], w)
				}
			}
		})
	}
}

// A .env file's unknown variable is named with its line; no warning shows a value.
func TestWarningsOfADotEnvFile(t *testing.T) {
	s := schema()
	s.Reserved = nil
	path := writeFile(t, t.TempDir(), ".env", "# x\nAPP_NAM=s3cr3t\nOTHER=1\n")
	dotEnv, err := s.DotEnv(path)
	if err != nil {
		t.Fatal(err)
	}
	env, _ := s.Environment(environ("APP_TOKN=s3cr3t"))
	got := s.Warnings(dotEnv, env)
	want := []string{
		"APP_NAM, at " + filepath.Clean(path) + " line 2, is not a setting and is ignored; the closest is APP_NAME",
		"APP_TOKN is not a setting and is ignored; the closest is APP_TOKEN",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Closest prefers the shortest candidate that the name begins, then the edit distance: --ttl
// is --ttl-ms, never --help (as far from ttl by edits as ttl-ms).
func TestClosest(t *testing.T) {
	for _, tc := range []struct {
		name       string
		candidates []string
		want       string
	}{
		{"ttl", []string{"help", "json", "ttl-ms", "ttl-ms-max"}, "ttl-ms"},
		{"dryrun", []string{"dry-run", "endpoint", "env-file"}, "dry-run"},
		{"stor", []string{"stack-name", "store"}, "store"},
		{"x", nil, ""},
	} {
		if got := settings.Closest(tc.name, tc.candidates); got != tc.want {
			t.Errorf("Closest(%q, %q) = %q, want %q", tc.name, tc.candidates, got, tc.want)
		}
	}
}
