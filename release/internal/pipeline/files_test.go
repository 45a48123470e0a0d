package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/regbo/lfp-swarm-lease/release/internal/testrepo"
)

// readFile returns a file of this repository.
func readFile(t *testing.T, rel string) string {
	t.Helper()
	content, err := os.ReadFile(filepath.Join(testrepo.SourceRoot(), filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(content)
}
