//go:build unix

package filestore_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"
)

// runTogether starts one process of this test binary per entry of envs, running only the test
// helper (with the entry added to its environment, and timeout as its test timeout), releases
// them together once every one is ready (awaitStart), waits for all of them and fails the test
// if any failed. It returns how long they ran after the release.
func runTogether(ctx context.Context, t *testing.T, helper string, timeout time.Duration, envs [][]string) time.Duration {
	t.Helper()
	startR, startW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer startW.Close()
	readyR, readyW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer readyR.Close()
	cmds := make([]*exec.Cmd, len(envs))
	outputs := make([]*bytes.Buffer, len(envs))
	for i, env := range envs {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+helper+"$", "-test.count=1", "-test.timeout="+timeout.String())
		cmd.Env = append(os.Environ(), env...)
		cmd.ExtraFiles = []*os.File{startR, readyW}
		outputs[i] = new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = outputs[i], outputs[i]
		if err := cmd.Start(); err != nil {
			t.Fatalf("start process %d: %v", i, err)
		}
		cmds[i] = cmd
	}
	// Only the children may keep these ends open: the ready pipe then reports EOF if they all
	// die, and closing startW reaches every child.
	startR.Close()
	readyW.Close()
	ready := make([]byte, len(envs))
	n, readyErr := io.ReadFull(readyR, ready)
	began := time.Now()
	startW.Close() // releases every process at once
	failed := false
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			failed = true
			t.Errorf("process %d: %v\n%s", i, err, outputs[i])
		}
	}
	if readyErr != nil {
		t.Fatalf("only %d of %d processes got ready: %v", n, len(envs), readyErr)
	}
	if failed {
		t.FailNow()
	}
	return time.Since(began)
}

// awaitStart is a helper process's side of runTogether: it reports itself ready and returns
// when every process may start.
func awaitStart(t *testing.T) {
	t.Helper()
	readyW, startR := os.NewFile(readyFD, "ready"), os.NewFile(startFD, "start")
	if _, err := readyW.Write([]byte{1}); err != nil {
		t.Fatalf("signal ready: %v", err)
	}
	readyW.Close()
	if _, err := io.Copy(io.Discard, startR); err != nil { // returns when the parent closes it
		t.Fatalf("wait for the start: %v", err)
	}
	startR.Close()
}
