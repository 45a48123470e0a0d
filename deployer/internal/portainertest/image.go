package portainertest

import (
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/regbo/lfp-swarm-lease/images/imagestest"
)

// sleeperSource is the tiny program of TinyImage: it prints $GREETING, so a test can read the
// substituted value in the service's logs too, then waits for the stop signal.
const sleeperSource = `package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	fmt.Println("GREETING=" + os.Getenv("GREETING"))
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	<-stop
}
`

// TinyImage builds the image recipe's image (imagestest.Image) of a static program that prints
// $GREETING and waits for SIGTERM, pushes it to an in-process registry on 127.0.0.1 (Swarm pulls
// loopback registries without TLS) that lives until the test's cleanup, and returns its
// reference. Stack files of tests can use it: nothing can be pulled from the internet here, and
// a reference to a registry lets `docker stack deploy` resolve the image's digest as it does in
// production.
func TinyImage(t testing.TB, dockerHost string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(sleeperSource), 0o644); err != nil {
		t.Fatal(err)
	}
	binary := filepath.Join(dir, "sleeper")
	build := exec.Command("go", "build", "-o", binary, "main.go")
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("portainertest: building the tiny image's program: %v\n%s", err, out)
	}
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	ref := strings.TrimPrefix(reg.URL, "http://") + "/portainertest/sleeper:" + randomHex(4)
	imagestest.Push(t, ref, imagestest.Image(t, binary))
	t.Cleanup(func() {
		// The engine's copy, pulled by the deploy: the services' tasks may still hold it, which
		// -f allows.
		_ = exec.Command("docker", "-H", dockerHost, "image", "rm", "-f", ref).Run()
	})
	return ref
}
