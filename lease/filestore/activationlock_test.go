package filestore_test

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestLockActivationsWaitsForAHolder: a free activation lock is taken at once; a held one (by
// another Store, as another process would) is waited for until its holder lets it go, and a
// caller that gives up meanwhile gets its context's error and leaves the lock free.
func TestLockActivationsWaitsForAHolder(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	a, b := openStore(t, dir), openStore(t, dir)
	unlockA, err := a.LockActivations(ctx, "gate")
	if err != nil {
		t.Fatal(err)
	}

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := b.LockActivations(short, "gate"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("lock held by another Store: %v, want the context's deadline", err)
	}

	got := make(chan func(), 1)
	go func() {
		unlock, err := b.LockActivations(ctx, "gate")
		if err != nil {
			t.Error(err)
			unlock = func() {}
		}
		got <- unlock
	}()
	select {
	case <-got:
		t.Fatal("took the lock while another Store held it")
	case <-time.After(100 * time.Millisecond): // a wait that must not end: no event to wait for
	}
	unlockA()
	select {
	case unlockB := <-got:
		unlockB()
	case <-time.After(10 * time.Second):
		t.Fatal("the lock was not taken after its holder let it go")
	}

	// Both the given-up waiter and b's holder have let go: a takes it again at once.
	deadline, cancel2 := context.WithTimeout(ctx, 10*time.Second)
	defer cancel2()
	unlockA, err = a.LockActivations(deadline, "gate")
	if err != nil {
		t.Fatalf("lock after both let go: %v", err)
	}
	unlockA()
}
