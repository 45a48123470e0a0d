package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/ownership"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
	"github.com/regbo/lfp-swarm-lease/settings"
)

// layers names the six layers, strongest first, as the precedence test sets them.
const (
	layerFlag = iota
	layerEnv
	layerEnvFile
	layerDotEnv
	layerDotEnvFile
)

// fixture sets stack_name in the chosen layers, each layer with a value of its own, and loads.
func fixture(t *testing.T, set []int) (*Config, []string, error) {
	t.Helper()
	dir := t.TempDir()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	var envFile string
	AddFlags(fs, &envFile)
	var args, dotEnv []string
	for _, l := range set {
		switch l {
		case layerFlag:
			args = append(args, "--stack-name=from-flag")
		case layerEnv:
			t.Setenv("SWARM_LEASE_DEPLOY_STACK_NAME", "from-env")
		case layerEnvFile:
			writeFile(t, filepath.Join(dir, "env-secret"), "from-env-file\n")
			t.Setenv("SWARM_LEASE_DEPLOY_STACK_NAME_FILE", filepath.Join(dir, "env-secret"))
		case layerDotEnv:
			dotEnv = append(dotEnv, "SWARM_LEASE_DEPLOY_STACK_NAME=from-dotenv")
		case layerDotEnvFile:
			writeFile(t, filepath.Join(dir, "dotenv-secret"), "from-dotenv-file\n")
			// Relative to the .env file's directory.
			dotEnv = append(dotEnv, "SWARM_LEASE_DEPLOY_STACK_NAME_FILE=dotenv-secret")
		}
	}
	if len(dotEnv) > 0 {
		writeFile(t, filepath.Join(dir, ".env"), strings.Join(dotEnv, "\n")+"\n")
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return Load(Input{Flags: fs, Dir: dir})
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// clearEnvironment unsets every deployer variable of the test process for the test.
func clearEnvironment(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, Prefix) {
			t.Setenv(name, "")
			os.Unsetenv(name)
		}
	}
}

// TestPrecedence sets the value in a layer and in every weaker one: the layer must win, and the
// source must say where the value came from.
func TestPrecedence(t *testing.T) {
	for _, tc := range []struct {
		name   string
		set    []int
		want   string
		source string
	}{
		// A value and its _FILE in one layer are an error (TestFileRules), so each case sets at
		// most one of the pair per source.
		{"flag over the environment and .env", []int{layerFlag, layerEnv, layerDotEnv}, "from-flag", "flag --stack-name"},
		{"flag over both _FILE layers", []int{layerFlag, layerEnvFile, layerDotEnvFile}, "from-flag", "flag --stack-name"},
		{"environment over .env", []int{layerEnv, layerDotEnv}, "from-env", "variable SWARM_LEASE_DEPLOY_STACK_NAME"},
		{"environment over .env _FILE", []int{layerEnv, layerDotEnvFile}, "from-env", "variable SWARM_LEASE_DEPLOY_STACK_NAME"},
		{"environment _FILE over .env", []int{layerEnvFile, layerDotEnv}, "from-env-file", "named by variable SWARM_LEASE_DEPLOY_STACK_NAME_FILE"},
		{"environment _FILE over .env _FILE", []int{layerEnvFile, layerDotEnvFile}, "from-env-file", "named by variable SWARM_LEASE_DEPLOY_STACK_NAME_FILE"},
		{".env over the default", []int{layerDotEnv}, "from-dotenv", ".env line 1 (SWARM_LEASE_DEPLOY_STACK_NAME)"},
		{".env _FILE over the default", []int{layerDotEnvFile}, "from-dotenv-file", ".env line 1 (SWARM_LEASE_DEPLOY_STACK_NAME_FILE)"},
		{"the default", nil, "lfp-demo", "default"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearEnvironment(t)
			cfg, warnings, err := fixture(t, tc.set)
			if err != nil {
				t.Fatal(err)
			}
			if len(warnings) > 0 {
				t.Errorf("warnings %v", warnings)
			}
			if cfg.StackName != tc.want {
				t.Errorf("stack name %q, want %q", cfg.StackName, tc.want)
			}
			if got := cfg.Source("stack_name"); !strings.Contains(got, tc.source) {
				t.Errorf("source %q, want one containing %q", got, tc.source)
			}
		})
	}
}

// TestFileRules checks the _FILE forms: one value per layer, readable non-empty files, every
// trailing line end dropped (the settings kernel's rule, the CLI's too).
func TestFileRules(t *testing.T) {
	t.Run("value and _FILE in the environment", func(t *testing.T) {
		clearEnvironment(t)
		_, _, err := fixture(t, []int{layerEnv, layerEnvFile})
		wantError(t, err, "SWARM_LEASE_DEPLOY_STACK_NAME and SWARM_LEASE_DEPLOY_STACK_NAME_FILE", "keep one")
	})
	t.Run("value and _FILE in .env", func(t *testing.T) {
		clearEnvironment(t)
		_, _, err := fixture(t, []int{layerDotEnv, layerDotEnvFile})
		wantError(t, err, "SWARM_LEASE_DEPLOY_STACK_NAME and SWARM_LEASE_DEPLOY_STACK_NAME_FILE", ".env line 1", ".env line 2")
	})
	t.Run("unreadable file", func(t *testing.T) {
		clearEnvironment(t)
		missing := filepath.Join(t.TempDir(), "nope")
		t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_API_KEY_FILE", missing)
		_, _, err := Load(Input{Dir: t.TempDir()})
		wantError(t, err, "SWARM_LEASE_DEPLOY_PORTAINER_API_KEY_FILE", "the file "+missing+" does not exist", "create the file")
	})
	t.Run("empty file", func(t *testing.T) {
		clearEnvironment(t)
		empty := filepath.Join(t.TempDir(), "empty")
		writeFile(t, empty, "\n")
		t.Setenv("SWARM_LEASE_DEPLOY_REGISTRY_TOKEN_FILE", empty)
		_, _, err := Load(Input{Dir: t.TempDir()})
		wantError(t, err, "SWARM_LEASE_DEPLOY_REGISTRY_TOKEN_FILE", empty, "is empty")
	})
	for _, tc := range []struct{ name, file, want string }{
		{"every trailing line end dropped", "ptr_abc \n\n", "ptr_abc "},
		{"CRLF dropped", "ptr_abc\r\n", "ptr_abc"},
		{"no newline", "ptr_abc", "ptr_abc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearEnvironment(t)
			key := filepath.Join(t.TempDir(), "key")
			writeFile(t, key, tc.file)
			t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_API_KEY_FILE", key)
			cfg, _, err := Load(Input{Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if string(cfg.PortainerAPIKey) != tc.want {
				t.Errorf("api key %q, want %q", string(cfg.PortainerAPIKey), tc.want)
			}
		})
	}
}

func wantError(t *testing.T, err error, parts ...string) {
	t.Helper()
	var cerr *Error
	if !errors.As(err, &cerr) {
		t.Fatalf("error %v, want a *config.Error", err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}

func TestTypedValuesNameTheirSource(t *testing.T) {
	clearEnvironment(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "deploy.env"), "# settings\nSWARM_LEASE_DEPLOY_REPLICAS=three\n")
	_, _, err := Load(Input{Dir: dir, EnvFile: filepath.Join(dir, "deploy.env")})
	wantError(t, err, "SWARM_LEASE_DEPLOY_REPLICAS", "deploy.env line 2", `"three" is not a whole number`)

	t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_INSECURE_SKIP_VERIFY", "maybe")
	_, _, err = Load(Input{Dir: t.TempDir()})
	wantError(t, err, "SWARM_LEASE_DEPLOY_PORTAINER_INSECURE_SKIP_VERIFY", "variable", "true or false")

	t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_INSECURE_SKIP_VERIFY", "yes")
	t.Setenv("SWARM_LEASE_DEPLOY_REPLICAS", "2")
	cfg, _, err := Load(Input{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.PortainerInsecureSkipVerify || cfg.Replicas != 2 || cfg.LeaseTTLMs != 5000 {
		t.Errorf("skip verify %v replicas %d ttl %d, want true, 2 and the default 5000", cfg.PortainerInsecureSkipVerify, cfg.Replicas, cfg.LeaseTTLMs)
	}
}

func TestUnknownVariablesWarnWithTheClosestSetting(t *testing.T) {
	clearEnvironment(t)
	t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_APIKEY", "x")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".env"), "SWARM_LEASE_DEPLOY_STAK_NAME=x\n")
	_, warnings, err := Load(Input{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(warnings, "\n")
	for _, want := range []string{
		"SWARM_LEASE_DEPLOY_PORTAINER_APIKEY is not a setting and is ignored; the closest is SWARM_LEASE_DEPLOY_PORTAINER_API_KEY",
		"SWARM_LEASE_DEPLOY_STAK_NAME, at " + filepath.Join(dir, ".env") + " line 1, is not a setting and is ignored; the closest is SWARM_LEASE_DEPLOY_STACK_NAME",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings %q do not contain %q", joined, want)
		}
	}
	if strings.Contains(joined, "=x") {
		t.Errorf("warnings %q show a value", joined)
	}
}

func TestEnvFile(t *testing.T) {
	clearEnvironment(t)
	missing := filepath.Join(t.TempDir(), "missing.env")
	_, _, err := Load(Input{EnvFile: missing, Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "--env-file") {
		t.Fatalf("missing explicit env file: error %v, want one naming it and --env-file", err)
	}
	// A .env that is not NAME=VALUE lines is a setting to fix, named by its line, never its
	// text; a byte order mark is skipped.
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".env"), "\uFEFFSWARM_LEASE_DEPLOY_STACK_NAME=from-bom\nSWARM_LEASE_DEPLOY_REGISTRY_TOKEN='s3cr3t\n")
	_, _, err = Load(Input{Dir: dir})
	wantError(t, err, "config: .env (from "+filepath.Join(dir, ".env")+" line 2): the quoted value that starts here is never closed")
	if strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("error %q quotes the file", err)
	}
	writeFile(t, filepath.Join(dir, ".env"), "\uFEFFSWARM_LEASE_DEPLOY_STACK_NAME=from-bom\n")
	if cfg, _, err := Load(Input{Dir: dir}); err != nil || cfg.StackName != "from-bom" || !strings.Contains(cfg.Source("stack_name"), ".env line 1") {
		t.Fatalf("a .env with a byte order mark: %v", err)
	}
	// Without --env-file and without ./.env, only defaults and the environment count.
	cfg, _, err := Load(Input{Dir: t.TempDir()})
	if err != nil || cfg.StackName != "lfp-demo" {
		t.Fatalf("no .env: %v, stack %q", err, cfg.StackName)
	}
}

func TestSecretsHaveNoFlagsAndPrintRedacted(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	var envFile string
	AddFlags(fs, &envFile)
	for _, s := range schema.Settings {
		if s.Kind == settings.Secret && fs.Lookup(strings.ReplaceAll(s.Key, "_", "-")) != nil {
			t.Errorf("secret %s has a flag", s.Key)
		}
	}
	clearEnvironment(t)
	t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_API_KEY", "ptr_topsecret")
	cfg, _, err := Load(Input{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		if got := fmt.Sprintf(format, cfg); strings.Contains(got, "topsecret") {
			t.Errorf("%s of the config shows the API key: %s", format, got)
		}
	}
}

func TestFlagsAreTypedAndShowTheirDefaults(t *testing.T) {
	fs := pflag.NewFlagSet("deploy", pflag.ContinueOnError)
	var envFile string
	AddFlags(fs, &envFile)
	for _, s := range schema.Settings {
		f := fs.Lookup(flagName(s))
		if flagName(s) == "" {
			continue
		}
		want := map[settings.Kind]string{settings.Text: "string", settings.Number: "int", settings.Switch: "bool"}[s.Kind]
		if got := f.Value.Type(); got != want {
			t.Errorf("--%s is a %s flag, want %s", flagName(s), got, want)
		}
		if s.Default != "" && f.DefValue != s.Default {
			t.Errorf("--%s shows the default %q, want %q", flagName(s), f.DefValue, s.Default)
		}
	}
	if err := fs.Parse([]string{"--replicas", "three"}); err == nil || !strings.Contains(err.Error(), "--replicas") {
		t.Errorf("a non-number for --replicas: %v, want an error naming the flag", err)
	}
}

func TestDemoPortIsATCPPort(t *testing.T) {
	clearEnvironment(t)
	t.Setenv("SWARM_LEASE_DEPLOY_DEMO_PORT", "70000")
	_, _, err := Load(Input{Dir: t.TempDir()})
	wantError(t, err, "SWARM_LEASE_DEPLOY_DEMO_PORT", "variable SWARM_LEASE_DEPLOY_DEMO_PORT", "1 to 65535")
	t.Setenv("SWARM_LEASE_DEPLOY_DEMO_PORT", "65535")
	if _, _, err := Load(Input{Dir: t.TempDir()}); err != nil {
		t.Errorf("port 65535: %v", err)
	}
}

func TestLeaseTTLFitsTheControllersTimingRule(t *testing.T) {
	clearEnvironment(t)
	smallest := smallestLeaseTTLMs()
	if smallest < 2000 || smallest > 5000 {
		t.Fatalf("smallest TTL %d ms, want one between the stack's shutdown timeout and the default", smallest)
	}
	t.Setenv("SWARM_LEASE_DEPLOY_LEASE_TTL_MS", fmt.Sprint(smallest-1))
	_, _, err := Load(Input{Dir: t.TempDir()})
	wantError(t, err, "SWARM_LEASE_DEPLOY_LEASE_TTL_MS", fmt.Sprintf("set %d or more", smallest))
	t.Setenv("SWARM_LEASE_DEPLOY_LEASE_TTL_MS", fmt.Sprint(smallest))
	if _, _, err := Load(Input{Dir: t.TempDir()}); err != nil {
		t.Errorf("TTL %d ms: %v", smallest, err)
	}
}

func TestExplainPortainerNamesTheSettingToCheck(t *testing.T) {
	clearEnvironment(t)
	t.Setenv("SWARM_LEASE_DEPLOY_ENDPOINT", "prod")
	t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_API_KEY", "ptr_secret")
	t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_URL", "https://p.example:9443")
	cfg, _, err := Load(Input{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		err   error
		parts []string
	}{
		{fmt.Errorf("x: %w", portainer.ErrEndpointNotFound), []string{"SWARM_LEASE_DEPLOY_ENDPOINT (from variable SWARM_LEASE_DEPLOY_ENDPOINT)", `no environment "prod"`}},
		{&portainer.APIError{Op: "create stack lfp-demo", StatusCode: 403}, []string{"SWARM_LEASE_DEPLOY_PORTAINER_API_KEY", "access", "SWARM_LEASE_DEPLOY_ENDPOINT"}},
		{&portainer.APIError{Op: "create stack lfp-demo", StatusCode: 409}, []string{"SWARM_LEASE_DEPLOY_STACK_NAME", "concurrent deploy", "deploy again"}},
		{fmt.Errorf("%w: engine", ownership.ErrNotManager), []string{"SWARM_LEASE_DEPLOY_ENDPOINT (from variable SWARM_LEASE_DEPLOY_ENDPOINT)", "Swarm manager"}},
		{fmt.Errorf("find: %w", &portainer.UnreachableError{Op: "endpoint 1", Address: "https://p.example:9443", Cause: errors.New("connection refused")}),
			[]string{"find: portainer: endpoint 1: portainer: unreachable at https://p.example:9443: connection refused; check SWARM_LEASE_DEPLOY_PORTAINER_URL (from variable SWARM_LEASE_DEPLOY_PORTAINER_URL), that Portainer is running"}},
		{&portainer.UnreachableError{Op: "status", Address: "https://p.example:9443", Cause: errors.New("x509: certificate signed by unknown authority"), TLS: true},
			[]string{"the TLS handshake failed: check SWARM_LEASE_DEPLOY_PORTAINER_CA_FILE (not set: the system's CAs)", "host name of SWARM_LEASE_DEPLOY_PORTAINER_URL"}},
	}
	for _, c := range cases {
		got := cfg.ExplainPortainer(c.err)
		if !errors.Is(got, c.err) {
			t.Errorf("%v: the explanation lost the error", c.err)
		}
		for _, p := range c.parts {
			if !strings.Contains(got.Error(), p) {
				t.Errorf("%q does not contain %q", got, p)
			}
		}
		if strings.Contains(got.Error(), "ptr_secret") || strings.Contains(got.Error(), "Options.") {
			t.Errorf("%q holds the API key, or names the client's Go options instead of the settings", got)
		}
	}
}

func TestPortainerURLIsNeverQuotedAndCleartextWarns(t *testing.T) {
	clearEnvironment(t)
	t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_API_KEY", "ptr_x")
	t.Setenv("SWARM_LEASE_DEPLOY_ENDPOINT", "1")
	t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_URL", "admin:hunter2@portainer.example:9443")
	_, _, err := Connect(Input{Dir: t.TempDir()}, &strings.Builder{})
	wantError(t, err, "SWARM_LEASE_DEPLOY_PORTAINER_URL", "https://")
	if err != nil && strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error %q prints the URL's password", err)
	}

	for url, wantWarning := range map[string]bool{
		"http://portainer.example:9000": true,
		"http://127.0.0.1:9000":         false,
		"http://[::1]:9000":             false,
		"http://localhost:9000":         false,
		"https://portainer.example":     false,
	} {
		t.Setenv("SWARM_LEASE_DEPLOY_PORTAINER_URL", url)
		var warn strings.Builder
		if _, _, err := Connect(Input{Dir: t.TempDir()}, &warn); err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		if got := strings.Contains(warn.String(), "clear text"); got != wantWarning {
			t.Errorf("%s: warnings %q, want a clear-text warning %v", url, warn.String(), wantWarning)
		}
	}
}
