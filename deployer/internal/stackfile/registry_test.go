package stackfile

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// The stack file's default image is the demo image the release publishes: the same registry
// and namespace as release.yml's push (docker.io/$CONTAINER_NAMESPACE, with the variable's
// default), so that `docker stack deploy -c deploy/stack.yml` without DEMO_IMAGE runs the
// released demo.
func TestTheStackDefaultsToTheReleasedImage(t *testing.T) {
	workflow, err := os.ReadFile(filepath.Join("..", "..", "..", ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	push := regexp.MustCompile(`--registry "([^"$]*)\$CONTAINER_NAMESPACE"`).FindSubmatch(workflow)
	namespace := regexp.MustCompile(`CONTAINER_NAMESPACE: \$\{\{ vars\.CONTAINER_NAMESPACE \|\| '([^']+)' \}\}`).FindSubmatch(workflow)
	if push == nil || namespace == nil {
		t.Fatalf("release.yml pushes to no registry/$CONTAINER_NAMESPACE with a default namespace (--registry %q, default %q)", push, namespace)
	}
	want := string(push[1]) + string(namespace[1]) + "/lfp-swarm-lease-demo:latest"
	defaults := regexp.MustCompile(`\$\{DEMO_IMAGE:-([^}]+)\}`).FindAllSubmatch(demoStack(t), -1)
	if len(defaults) == 0 {
		t.Fatalf("%s has no default for ${DEMO_IMAGE}", Path)
	}
	for _, d := range defaults {
		if string(d[1]) != want {
			t.Errorf("%s defaults to %s, want the released %s", Path, d[1], want)
		}
	}
}
