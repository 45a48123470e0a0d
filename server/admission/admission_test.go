package admission

import (
	"testing"
	"time"
)

func TestAdmissionBudget(t *testing.T) {
	a, err := New(60, 2)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	for i := range 60 {
		if ok, _ := a.Allow("x", now); !ok {
			t.Fatalf("request %d of a 60/min budget refused", i+1)
		}
	}
	ok, retry := a.Allow("x", now)
	if ok || retry != time.Second {
		t.Fatalf("61st request: ok=%v retry=%v, want refused with 1 s", ok, retry)
	}
	if ok, _ := a.Allow("x", now.Add(time.Second)); !ok {
		t.Fatal("one request per second refills")
	}
	// The table holds two clients: a third evicts the least recently seen, which then starts
	// with a full budget again.
	a.Allow("y", now)
	a.Allow("z", now)
	if ok, _ := a.Allow("x", now.Add(time.Second)); !ok {
		t.Fatal("an evicted client starts with a full budget")
	}
}
