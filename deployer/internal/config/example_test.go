package config

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEnvExampleDocumentsEverySetting reads the repository's .env.example as a .env: it names
// every setting once, with its default or empty, secrets empty, and nothing unknown.
func TestEnvExampleDocumentsEverySetting(t *testing.T) {
	path := filepath.Join("..", "..", "..", ".env.example")
	vars, err := dotEnvVariables(path, "--env-file")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range Settings {
		v, ok := vars[s.Variable()]
		if !ok {
			t.Errorf(".env.example lacks %s", s.Variable())
			continue
		}
		if v.text != s.Default {
			t.Errorf(".env.example sets %s=%q, want its default %q", s.Variable(), v.text, s.Default)
		}
		delete(vars, s.Variable())
	}
	for name := range vars {
		t.Errorf(".env.example names %s, which is not a setting", name)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Secret lines carry no value (a default is empty for every secret).
	for _, line := range strings.Split(string(data), "\n") {
		for _, s := range Settings {
			if s.Kind == Secret && strings.HasPrefix(line, s.Variable()+"=") && line != s.Variable()+"=" {
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
