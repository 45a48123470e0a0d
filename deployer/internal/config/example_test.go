package config

import (
	"os"
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
