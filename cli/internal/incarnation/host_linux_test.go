package incarnation

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

// record is a held term of inc.
func record(inc lease.Incarnation) lease.Record {
	return lease.Record{Namespace: "jobs", HolderID: "c1", Fence: 7, TTL: time.Minute, Incarnation: inc.String()}
}

// holdInChild starts a process that inherits f (as its descriptor 3) and sleeps: it holds the
// lock as a run's guard and command do. The returned function kills it and waits for it.
func holdInChild(t *testing.T, f *os.File) func() {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	cmd.ExtraFiles = []*os.File{f}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	kill := func() {
		if !killed {
			killed = true
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
	t.Cleanup(kill)
	return kill
}

// TestALockProvesARunGoneOnceNothingHoldsIt: run's lock, held by run and inherited by a child,
// proves nothing while either lives; once run has closed it and the child is killed, it proves
// the incarnation gone — on this host, for that very file only.
func TestALockProvesARunGoneOnceNothingHoldsIt(t *testing.T) {
	dir := t.TempDir()
	r, err := ForRun(dir, "an election")
	if err != nil || r.Lock == nil {
		t.Fatalf("ForRun: %+v, %v", r, err)
	}
	rec := record(r.Incarnation)
	if ev, recheck := (Host{}).Gone(context.Background(), rec); ev != "" || recheck <= 0 {
		t.Fatalf("with run holding its lock: %q, recheck %v; want no evidence, asked again soon", ev, recheck)
	}
	kill := holdInChild(t, r.Lock)
	_ = r.Lock.Close() // run is gone; its command still holds the lock
	if ev, _ := (Host{}).Gone(context.Background(), rec); ev != "" {
		t.Fatalf("with the command alive: %q, want no evidence", ev)
	}
	kill()
	ev, _ := (Host{}).Gone(context.Background(), rec)
	if !strings.Contains(ev, r.Incarnation.Lock.Path) {
		t.Fatalf("with every holder gone: %q, want evidence naming the lock", ev)
	}
	// The same facts of another boot, or another file at the path, prove nothing.
	other := r.Incarnation
	other.Boot = "another-boot"
	if ev, _ := (Host{}).Gone(context.Background(), record(other)); ev != "" {
		t.Errorf("another boot: %q, want no evidence", ev)
	}
	if err := os.Remove(r.Incarnation.Lock.Path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.Incarnation.Lock.Path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if ev, _ := (Host{}).Gone(context.Background(), rec); ev != "" {
		t.Errorf("another file at the lock's path: %q, want no evidence", ev)
	}
}

// TestACallerProvesItsTermGoneOnceItAndItsGroupHaveExited: a one-shot's incarnation is its
// caller; the caller alive proves nothing, nor does its exit while something it started runs on
// in its process group; once that has ended too, the term's work is provably gone. A PID in
// another PID namespace proves nothing.
func TestACallerProvesItsTermGoneOnceItAndItsGroupHaveExited(t *testing.T) {
	// The caller is a shell that leads a group of its own, and leaves a child behind in it.
	caller := exec.Command("/bin/sh", "-c", "sleep 300 & echo $!; exec sleep 300")
	caller.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := caller.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := caller.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-caller.Process.Pid, syscall.SIGKILL); _ = caller.Wait() }()
	var left int
	if _, err := fmt.Fscan(out, &left); err != nil {
		t.Fatal(err)
	}
	start, group, ok := processStart(caller.Process.Pid)
	if !ok || group != caller.Process.Pid {
		t.Fatalf("caller %d: start %d, group %d, ok %v", caller.Process.Pid, start, group, ok)
	}
	inc := lease.Incarnation{ID: "x", Boot: bootID(), PID: caller.Process.Pid, PIDStart: start, PIDNS: pidNamespace(), PIDGroup: group}
	if ev, recheck := (Host{}).Gone(context.Background(), record(inc)); ev != "" || recheck <= 0 {
		t.Fatalf("with the caller alive: %q, recheck %v", ev, recheck)
	}
	_ = caller.Process.Signal(syscall.SIGKILL)
	_ = caller.Wait()
	if ev, _ := (Host{}).Gone(context.Background(), record(inc)); ev != "" {
		t.Fatalf("with the caller exited but its child running in its group: %q, want no evidence", ev)
	}
	_ = syscall.Kill(left, syscall.SIGKILL)
	for deadline := time.Now().Add(5 * time.Second); syscall.Kill(-group, 0) == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the caller's group still has a process 5 s after its last was killed")
		}
	}
	if ev, _ := (Host{}).Gone(context.Background(), record(inc)); !strings.Contains(ev, "has exited") {
		t.Fatalf("with the caller and its group gone: %q, want evidence", ev)
	}
	elsewhere := inc
	elsewhere.PIDNS++
	if ev, _ := (Host{}).Gone(context.Background(), record(elsewhere)); ev != "" {
		t.Fatalf("a caller of another PID namespace: %q, want no evidence", ev)
	}
}

// TestOneShotsOfOneCallerAreOneIncarnation: two one-shots for one caller are one incarnation,
// which records the caller; without a caller, every one-shot is an incarnation of its own, and
// records nothing a witness could prove gone.
func TestOneShotsOfOneCallerAreOneIncarnation(t *testing.T) {
	a, errA := OneShot(os.Getpid())
	b, errB := OneShot(os.Getpid())
	if errA != nil || errB != nil || a != b || a.ID == "" || a.PID != os.Getpid() || a.PIDGroup <= 0 {
		t.Fatalf("two one-shots of one caller: %+v (%v) and %+v (%v)", a, errA, b, errB)
	}
	c, _ := OneShot(0)
	d, _ := OneShot(0)
	if c.ID == d.ID || c.PID != 0 {
		t.Fatalf("two one-shots without a caller: %+v and %+v, want two incarnations, no PID", c, d)
	}
	if ev, _ := (Host{}).Gone(context.Background(), record(c)); ev != "" {
		t.Fatalf("a one-shot without a caller proven gone: %q", ev)
	}
	if _, err := OneShot(1 << 30); err == nil {
		t.Fatal("a caller that does not exist: no error")
	}
}

// TestAnElectionsLocksNobodyHoldsGoWhenATermIsWon: a run that wins a term removes the locks of
// its election that nobody holds — incarnations gone, whose terms are over — and keeps the held
// ones; a run that never led removes its own as it ends, one that led keeps it.
func TestAnElectionsLocksNobodyHoldsGoWhenATermIsWon(t *testing.T) {
	dir := t.TempDir()
	dead, _ := ForRun(dir, "e")
	alive, _ := ForRun(dir, "e")
	other, _ := ForRun(dir, "another election")
	_ = dead.Lock.Close() // its processes are gone
	r, err := ForRun(dir, "e")
	if err != nil || !r.Earlier {
		t.Fatalf("ForRun: %v; Earlier %v, want true beside the election's earlier locks", err, r.Earlier)
	}
	r.Lead()
	for _, c := range []struct {
		run  *Run
		kept bool
	}{{dead, false}, {alive, true}, {other, true}, {r, true}} {
		if _, err := os.Stat(c.run.Incarnation.Lock.Path); (err == nil) != c.kept {
			t.Errorf("lock %s: kept %v, want %v", c.run.Incarnation.Lock.Path, err == nil, c.kept)
		}
	}
	r.Close()
	alive.Close()
	if _, err := os.Stat(r.Incarnation.Lock.Path); err != nil {
		t.Errorf("the lock of a run that led was removed as it ended: %v", err)
	}
	if _, err := os.Stat(alive.Incarnation.Lock.Path); err == nil {
		t.Error("the lock of a run that never led was kept as it ended")
	}
}

func TestTheHostnameMountNamesTheContainer(t *testing.T) {
	const id = "4f1c0e5d"
	mountinfo := `1234 1200 0:45 / / rw,relatime - overlay overlay rw
1240 1234 254:1 /var/lib/docker/containers/` + id + `/resolv.conf /etc/resolv.conf rw,relatime - ext4 /dev/vda1 rw
1241 1234 254:1 /tmp/data/containers/` + id + `/hostname /etc/hostname rw,relatime - ext4 /dev/vda1 rw
`
	if !mountsHostnameOf(strings.NewReader(mountinfo), id) {
		t.Error("the container's hostname file at /etc/hostname: not recognised")
	}
	if mountsHostnameOf(strings.NewReader(mountinfo), "9a9a") {
		t.Error("another container recognised")
	}
	if mountsHostnameOf(strings.NewReader(strings.ReplaceAll(mountinfo, " /etc/hostname ", " /etc/other ")), id) {
		t.Error("the hostname file mounted elsewhere recognised")
	}
}
