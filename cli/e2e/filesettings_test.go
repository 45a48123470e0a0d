//go:build linux

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/settings"
	"github.com/regbo/lfp-swarm-lease/settings/settingstest"
)

// settingDeadline is how long a refusal of a setting's file may take: the process's start and
// one stat, with room for a loaded machine.
const settingDeadline = 10 * time.Second

// fileSetting runs try-acquire on a file store with the holder ID from file, through the
// variable SWARM_LEASE_HOLDER_ID_FILE, under settingstest's deadline and memory cap.
func fileSetting(t *testing.T, file string) settingstest.Result {
	t.Helper()
	cmd := exec.Command(binary, "try-acquire", "--json")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOSTNAME=not-a-container",
		"SWARM_LEASE_STORE=file://" + t.TempDir(), "SWARM_LEASE_NAMESPACE=file-setting",
		"SWARM_LEASE_HOLDER_ID_FILE=" + file}
	return settingstest.Run(t, cmd, settingDeadline)
}

// A _FILE that names anything but a regular file of at most 64 KiB exits 2 at once, naming the
// variable, the file and what is wrong, having read nothing of it: /dev/zero once grew the
// process past 7 GB, a FIFO blocked it for ever with SIGTERM and SIGINT ignored.
func TestFileSettingRefusesWhatIsNotASmallRegularFile(t *testing.T) {
	for _, c := range settingstest.BadFiles(t, settings.MaxValueFile) {
		t.Run(c.Name, func(t *testing.T) {
			r := fileSetting(t, c.Path)
			if r.Code != 2 {
				t.Errorf("exit %d, want 2\nstderr: %s", r.Code, r.Brief())
			}
			for _, want := range []string{"SWARM_LEASE_HOLDER_ID_FILE", c.Path, c.Problem, "use a "} {
				if !strings.Contains(r.Stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, r.Brief())
				}
			}
			if r.MaxRSS > 64<<20 {
				t.Errorf("peak memory %d MiB: the file was read without a bound", r.MaxRSS>>20)
			}
		})
	}
}

// A symbolic link to a regular file, as a mounted secret often is, is read.
func TestFileSettingReadsASymlinkToARegularFile(t *testing.T) {
	r := fileSetting(t, settingstest.SymlinkTo(t, "from-a-file\n"))
	if r.Code != 0 {
		t.Fatalf("exit %d, want 0\nstderr: %s", r.Code, r.Brief())
	}
	var out tryAcquireOut
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil || out.Grant == nil || out.Grant.HolderID != "from-a-file" {
		t.Fatalf("try-acquire: %s (%v), want a grant to from-a-file", r.Stdout, err)
	}
}

// A secret's file that is too large is refused without a byte of it in the message.
func TestFileSettingNeverPrintsTheFile(t *testing.T) {
	secret := "s3cr3t-holder-" + strings.Repeat("x", settings.MaxValueFile)
	path := t.TempDir() + "/secret"
	if err := os.WriteFile(path, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	r := fileSetting(t, path)
	if r.Code != 2 || !strings.Contains(r.Stderr, "is larger than 64 KiB") {
		t.Fatalf("exit %d, want 2 with the limit\nstderr: %s", r.Code, r.Brief())
	}
	if strings.Contains(r.Stderr+r.Stdout, "s3cr3t") {
		t.Fatalf("the output quotes the file:\n%s", r.Brief())
	}
}
