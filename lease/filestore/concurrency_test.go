//go:build unix

// The file store exists to coordinate several processes of one host (and only builds its lock
// on Unix), so its concurrency test runs its contenders as separate processes: this test binary
// started again with -test.run=^TestHelperContender$ and its role in the environment.

package filestore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/regbo/lfp-swarm-lease/lease/filestore"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// The environment of a contender process. envRole set to roleContender is what makes
// TestHelperContender act; every other run of it returns at once.
const (
	envRole       = "LEASETEST_FILESTORE_ROLE"
	roleContender = "contender"
	envDir        = "LEASETEST_FILESTORE_DIR"
	envNamespace  = "LEASETEST_FILESTORE_NAMESPACE"
	envClient     = "LEASETEST_FILESTORE_CLIENT"
	envOps        = "LEASETEST_FILESTORE_OPS"
	envSeed       = "LEASETEST_FILESTORE_SEED"
	envOut        = "LEASETEST_FILESTORE_OUT"
)

// refusedPause is the contenders' think time after a refusal (leasetest.ContenderConfig): a
// refusal is a lock-free read, a write takes a few fsyncs.
const refusedPause = 10 * time.Millisecond

// The contender processes inherit two pipes: they each write one byte to readyFD once set up,
// and all start when the parent closes the write end of startFD — a barrier, not a sleep.
const (
	startFD = 3 // cmd.ExtraFiles[0]
	readyFD = 4 // cmd.ExtraFiles[1]
)

// hostMonotonic reads CLOCK_MONOTONIC, which every process of one host shares and which never
// steps (unlike the wall clock, which NTP or an operator may set back mid-run and so reorder
// calls of different processes). Go's own monotonic readings cannot serve: they count from each
// process's start.
func hostMonotonic() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(fmt.Sprintf("clock_gettime(CLOCK_MONOTONIC): %v", err)) // cannot happen on Linux or macOS
	}
	return ts.Nano()
}

// TestConcurrencyAcrossProcesses runs 8 contender processes × 200 operations on one directory
// and checks the merged history for linearizability.
func TestConcurrencyAcrossProcesses(t *testing.T) {
	const contenders, opsEach = leasetest.DefaultContenders, leasetest.DefaultOpsPerContender
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // kills stuck contenders
	defer cancel()
	dir, outDir := t.TempDir(), t.TempDir()
	store, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	ns := leasetest.Namespace(t)
	admin, err := leasetest.NewContenderElection(store, ns, 0)
	if err != nil {
		t.Fatal(err)
	}
	initial, err := admin.Init(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seed := leasetest.ConcurrencySeed(t)

	envs := make([][]string, contenders)
	histories := make([]string, contenders)
	for i := range envs {
		histories[i] = filepath.Join(outDir, fmt.Sprintf("contender-%d.jsonl", i))
		envs[i] = []string{
			envRole + "=" + roleContender,
			envDir + "=" + dir,
			envNamespace + "=" + ns,
			envClient + "=" + strconv.Itoa(i),
			envOps + "=" + strconv.Itoa(opsEach),
			envSeed + "=" + strconv.FormatUint(seed, 10),
			envOut + "=" + histories[i],
		}
	}
	elapsed := runTogether(ctx, t, "TestHelperContender", 2*time.Minute, envs)
	t.Logf("%d contender processes × %d operations on %s in %v", contenders, opsEach, store.Describe(), elapsed.Round(time.Millisecond))

	var ops []leasetest.Op
	for i, path := range histories {
		f, err := os.Open(path)
		if err != nil {
			t.Fatalf("contender %d's history: %v", i, err)
		}
		got, err := leasetest.ReadOps(f)
		f.Close()
		if err != nil {
			t.Fatalf("contender %d's history %s: %v", i, path, err)
		}
		if bad := slices.IndexFunc(got, func(op leasetest.Op) bool { return op.Client != i }); bad >= 0 {
			t.Fatalf("contender %d's history holds an operation of client %d", i, got[bad].Client)
		}
		ops = append(ops, got...)
	}
	t.Log(leasetest.Summary(initial.Fence, ops))
	leasetest.VerifyHistory(t, initial.Fence, ops, 0)
	final, err := admin.Inspect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := leasetest.CheckFinalRecord(initial.Fence, ops, final.Record); err != nil {
		t.Error(err)
	}
}

// TestHelperContender is one contender process of TestConcurrencyAcrossProcesses. Run any other
// way, it does nothing and passes.
func TestHelperContender(t *testing.T) {
	if os.Getenv(envRole) != roleContender {
		return
	}
	client, err := strconv.Atoi(os.Getenv(envClient))
	if err != nil {
		t.Fatalf("%s: %v", envClient, err)
	}
	opsEach, err := strconv.Atoi(os.Getenv(envOps))
	if err != nil {
		t.Fatalf("%s: %v", envOps, err)
	}
	seed, err := strconv.ParseUint(os.Getenv(envSeed), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", envSeed, err)
	}
	store, err := filestore.New(os.Getenv(envDir))
	if err != nil {
		t.Fatal(err)
	}
	e, err := leasetest.NewContenderElection(store, os.Getenv(envNamespace), client)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(os.Getenv(envOut))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()

	awaitStart(t)

	ops, runErr := leasetest.RunContender(t.Context(), e, leasetest.ContenderConfig{
		Client: client, Ops: opsEach, Seed: seed, Now: hostMonotonic, RefusedPause: refusedPause,
	})
	if err := leasetest.WriteOps(out, ops); err != nil {
		t.Fatalf("write history: %v", err)
	}
	if err := out.Close(); err != nil {
		t.Fatalf("write history: %v", err)
	}
	if runErr != nil {
		t.Fatal(runErr)
	}
}
