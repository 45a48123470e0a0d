package settings_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/regbo/lfp-swarm-lease/settings"
)

// schema is a program's table for these tests.
func schema() *settings.Schema {
	return &settings.Schema{Prefix: "APP", Reserved: []string{"FENCE", "TEST_*"}, Settings: []settings.Setting{
		{Key: "name", Default: "demo"},
		{Key: "token", Kind: settings.Secret},
		{Key: "ttl_ms", Kind: settings.Number, Default: "5000"},
		{Key: "limit", Kind: settings.Number},
		{Key: "verify", Kind: settings.Switch, Default: "true"},
	}}
}

func environ(vars ...string) func() []string { return func() []string { return vars } }

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// options is what a program unmarshals into.
type options struct {
	Name   string `koanf:"name"`
	Token  string `koanf:"token"`
	TTL    int    `koanf:"ttl_ms"`
	Limit  *int64 `koanf:"limit"`
	Verify bool   `koanf:"verify"`
}

// Each layer overrides the weaker ones, values are typed by their kind, and the source of
// each is kept.
func TestMergeTypesEveryLayerAndKeepsTheSources(t *testing.T) {
	s := schema()
	dir := t.TempDir()
	_, err := s.DotEnv(writeFile(t, dir, ".env", "APP_NAME=from-dotenv\nAPP_TTL_MS= 7000 \nAPP_TOKEN_FILE=token\nOTHER=ignored\n"))
	if err == nil {
		t.Fatal("the token file was read before it existed")
	}
	writeFile(t, dir, "token", "tok\r\n\n")
	dotEnv, err := s.DotEnv(filepath.Join(dir, ".env"))
	if err != nil {
		t.Fatal(err)
	}
	env, err := s.Environment(environ("APP_NAME=from-env", "APP_VERIFY=off", "APP_LIMIT="))
	if err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.Int64("ttl-ms", 0, "")
	fs.String("name", "", "")
	fs.Bool("dry-run", false, "")
	if err := fs.Parse([]string{"--ttl-ms", "9000", "--dry-run"}); err != nil {
		t.Fatal(err)
	}
	flags, err := s.Flags(fs)
	if err != nil {
		t.Fatal(err)
	}
	labels := s.Labels(map[string]string{"app.limit": "12"})
	v, err := s.Merge(s.Defaults(), labels, dotEnv, env, flags)
	if err != nil {
		t.Fatal(err)
	}
	var o options
	if err := v.Unmarshal(&o); err != nil {
		t.Fatal(err)
	}
	if o.Name != "from-env" || o.Token != "tok" || o.TTL != 9000 || o.Limit == nil || *o.Limit != 12 || o.Verify {
		t.Errorf("options %+v (limit %v)", o, o.Limit)
	}
	for key, want := range map[string]string{
		"name":   "environment variable APP_NAME",
		"token":  "file " + filepath.Join(dir, "token") + " named by " + filepath.Join(dir, ".env") + " line 3 (APP_TOKEN_FILE)",
		"ttl_ms": "flag --ttl-ms",
		"limit":  "container label app.limit",
		"verify": "environment variable APP_VERIFY",
	} {
		if got := v.Source(key).String(); got != want {
			t.Errorf("source of %s: %q, want %q", key, got, want)
		}
	}
	if v, _ := s.Merge(s.Defaults()); v.Source("name").String() != "default" || v.IsSet("limit") {
		t.Errorf("defaults: %v, limit set %v", v.Source("name"), v.IsSet("limit"))
	}
}

// A value that is not of its kind is reported with its source and left out, whatever layer it
// is in; the others still merge.
func TestMergeReportsValuesNotOfTheirKind(t *testing.T) {
	s := schema()
	env, _ := s.Environment(environ("APP_TTL_MS=soon", "APP_VERIFY=maybe", "APP_NAME=x"))
	labels := s.Labels(map[string]string{"app.limit": "many"})
	v, err := s.Merge(s.Defaults(), labels, env)
	for _, want := range []string{
		`invalid ttl_ms "soon" (from environment variable APP_TTL_MS): want a whole number`,
		`invalid limit "many" (from container label app.limit): want a whole number`,
		`invalid verify "maybe" (from environment variable APP_VERIFY): want true or false`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	var ve *settings.ValueError
	if !errors.As(err, &ve) {
		t.Errorf("error %T, want *ValueError", err)
	}
	if v.Text("name") != "x" || v.Text("ttl_ms") != "5000" || v.Source("ttl_ms").Kind != settings.FromDefault {
		t.Errorf("name %q, ttl %q from %v", v.Text("name"), v.Text("ttl_ms"), v.Source("ttl_ms"))
	}
}

// The _FILE rule: the file's value without its trailing line ends; both variables in one place,
// and a file that gives no value, are errors naming the variables and the file.
func TestFileVariables(t *testing.T) {
	s := schema()
	dir := t.TempDir()
	for content, want := range map[string]string{"tok": "tok", "tok \n\n": "tok ", "tok\r\n": "tok", " tok\t\r\n\r\n": " tok\t"} {
		env, err := s.Environment(environ("APP_TOKEN_FILE=" + writeFile(t, dir, "t", content)))
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := s.Merge(env); v.Text("token") != want {
			t.Errorf("file %q: value %q, want %q", content, v.Text("token"), want)
		}
	}
	empty, missing := writeFile(t, dir, "empty", "\r\n\n"), filepath.Join(dir, "missing")
	_, err := s.Environment(environ("APP_NAME=a", "APP_NAME_FILE="+empty, "APP_TOKEN_FILE="+empty, "APP_TTL_MS_FILE="+missing))
	var conflict *settings.ConflictError
	var valueFile *settings.ValueFileError
	if !errors.As(err, &conflict) || conflict.Variable != "APP_NAME" || conflict.FileVariable != "APP_NAME_FILE" || !errors.As(err, &valueFile) {
		t.Fatalf("error %v", err)
	}
	for _, want := range []string{
		"both APP_NAME and APP_NAME_FILE are set: keep one",
		empty + " (named by APP_TOKEN_FILE) is empty",
		missing + " (named by APP_TTL_MS_FILE) does not exist: create the file",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if !errors.Is(err, settings.ErrEmpty) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error %v matches neither ErrEmpty nor fs.ErrNotExist", err)
	}
}

// EmptyIsUnset: an empty variable sets nothing. Without it an empty text is a value, and an
// empty Number without a default is unset.
func TestEmptyVariables(t *testing.T) {
	s := schema()
	env, err := s.Environment(environ("APP_NAME=", "APP_LIMIT=", "APP_TOKEN_FILE="))
	if err == nil || !strings.Contains(err.Error(), "APP_TOKEN_FILE") {
		t.Errorf("an empty _FILE: %v, want an error naming it", err)
	}
	v, _ := s.Merge(s.Defaults(), env)
	if v.Text("name") != "" || v.Source("name").Kind != settings.FromEnv || v.IsSet("limit") {
		t.Errorf("without EmptyIsUnset: name %q from %v, limit set %v", v.Text("name"), v.Source("name"), v.IsSet("limit"))
	}
	s.EmptyIsUnset = true
	env, err = s.Environment(environ("APP_NAME=", "APP_LIMIT=", "APP_TOKEN_FILE=", "APP_UNKNOWN="))
	if err != nil {
		t.Fatal(err)
	}
	v, _ = s.Merge(s.Defaults(), env)
	if v.Text("name") != "demo" || v.IsSet("limit") || v.IsSet("token") {
		t.Errorf("with EmptyIsUnset: name %q, limit %v, token %v", v.Text("name"), v.IsSet("limit"), v.IsSet("token"))
	}
	if w := s.Warnings(env); len(w) != 0 {
		t.Errorf("warnings %q for an empty variable", w)
	}
}

// A .env file that ReadFile refuses or that does not parse gives its error and an empty layer.
func TestDotEnvErrors(t *testing.T) {
	s := schema()
	dir := t.TempDir()
	var fe *settings.FileError
	if _, err := s.DotEnv(dir); !errors.As(err, &fe) || !errors.Is(err, settings.ErrNotRegular) {
		t.Errorf("a directory: %v", err)
	}
	var se *settings.SyntaxError
	if _, err := s.DotEnv(writeFile(t, dir, "bad.env", "APP_NAME=\"x\n")); !errors.As(err, &se) || se.Line != 1 {
		t.Errorf("an unterminated quote: %v", err)
	}
}
