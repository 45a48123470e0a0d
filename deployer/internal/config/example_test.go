package config

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/settings"
)

// TestEnvExampleDocumentsEverySetting reads the repository's .env.example as a .env: it names
// every setting once, with its default or empty, secrets empty, and nothing unknown.
func TestEnvExampleDocumentsEverySetting(t *testing.T) {
	path := filepath.Join("..", "..", "..", ".env.example")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	assignments, err := settings.ParseDotEnv(path, data)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, a := range assignments {
		if _, twice := vars[a.Name]; twice {
			t.Errorf(".env.example sets %s twice", a.Name)
		}
		vars[a.Name] = a.Value
	}
	for _, s := range schema.Settings {
		v, ok := vars[variable(s.Key)]
		if !ok {
			t.Errorf(".env.example lacks %s", variable(s.Key))
			continue
		}
		if v != s.Default {
			t.Errorf(".env.example sets %s=%q, want its default %q", variable(s.Key), v, s.Default)
		}
		delete(vars, variable(s.Key))
	}
	for name := range vars {
		t.Errorf(".env.example names %s, which is not a setting", name)
	}
	// Secret lines carry no value (a default is empty for every secret).
	for _, line := range strings.Split(string(data), "\n") {
		for _, s := range schema.Settings {
			if s.Kind == settings.Secret && strings.HasPrefix(line, variable(s.Key)+"=") && line != variable(s.Key)+"=" {
				t.Errorf(".env.example gives a secret a value: %s", line)
			}
		}
	}
}

// TestRecommendedSecretFilesAreIgnoredByGit: the secret file that .env.example recommends,
// secrets/portainer-api-key, is one git never adds, like .env itself.
func TestRecommendedSecretFilesAreIgnoredByGit(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	data, err := os.ReadFile(filepath.Join(root, ".env.example"))
	if err != nil {
		t.Fatal(err)
	}
	const recommended = "SWARM_LEASE_DEPLOY_PORTAINER_API_KEY_FILE=secrets/portainer-api-key"
	if !strings.Contains(string(data), recommended) {
		t.Fatalf(".env.example no longer recommends %s: update this test", recommended)
	}
	for _, path := range []string{"secrets/portainer-api-key", ".env"} {
		cmd := exec.Command("git", "check-ignore", "-q", path)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("git check-ignore %s: %v %s: git would add the secret (add it to .gitignore)", path, err, out)
		}
	}
}
