package ledger

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fixedClock is a deterministic clock that moves one second per reading.
func fixedClock() func() time.Time {
	t := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Second); return t }
}

// issuedUpTo is an election that has issued every fence up to its value.
type issuedUpTo uint64

func (i issuedUpTo) Issued(context.Context, uint64) (uint64, error) { return uint64(i), nil }

// unreadable is an election that cannot be read; it counts the reads.
type unreadable struct{ reads int }

func (u *unreadable) Issued(context.Context, uint64) (uint64, error) {
	u.reads++
	return 0, fmt.Errorf("%w: no controller", ErrElectionUnknown)
}

func open(t *testing.T, dir string) *Ledger {
	t.Helper()
	return openWith(t, dir, issuedUpTo(MaxFence))
}

// openWith opens the ledger in dir with election.
func openWith(t *testing.T, dir string, election Election) *Ledger {
	t.Helper()
	l, err := Open(dir, election, WithClock(fixedClock()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func write(fence uint64, holder string) Write {
	return Write{Fence: fence, Holder: holder, Node: "node-1", Task: "task-" + holder, WrittenAt: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
}

func mustAppend(t *testing.T, l *Ledger, w Write) Entry {
	t.Helper()
	e, err := l.Append(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestFencingRule(t *testing.T) {
	l := open(t, t.TempDir())
	steps := []struct {
		fence    uint64
		accepted bool
		highest  uint64
	}{
		{5, true, 0},
		{5, true, 0}, // the same term writes again
		{7, true, 0}, // a new term
		{6, false, 7},
		{5, false, 7},
		{7, true, 0},
	}
	for i, s := range steps {
		e := mustAppend(t, l, write(s.fence, "a"))
		if e.Accepted != s.accepted || e.Highest != s.highest || e.Seq != uint64(i+1) {
			t.Fatalf("write %d with fence %d: accepted=%v highest=%d seq=%d, want accepted=%v highest=%d seq=%d",
				i, s.fence, e.Accepted, e.Highest, e.Seq, s.accepted, s.highest, i+1)
		}
	}
	snap := l.Snapshot()
	if snap.Highest != 7 || snap.Counts != (Counts{Accepted: 4, Rejected: 2}) {
		t.Fatalf("snapshot highest=%d counts=%+v, want 7 and 4/2", snap.Highest, snap.Counts)
	}
	if snap.Rejected[0].Fence != 5 || snap.Rejected[1].Fence != 6 || snap.Accepted[0].Seq != 6 {
		t.Fatalf("snapshot not newest first: %+v", snap)
	}
}

func TestInvalidWritesAreRefusedAndNotRecorded(t *testing.T) {
	l := open(t, t.TempDir())
	for name, w := range map[string]Write{
		"fence":  {Holder: "a"},
		"holder": {Fence: 1},
		"task":   {Fence: 1, Holder: "a", Task: strings.Repeat("x", MaxFieldLen+1)},
	} {
		if _, err := l.Append(context.Background(), w); !errors.Is(err, ErrInvalidWrite) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want ErrInvalidWrite naming %s", name, err, name)
		}
	}
	if c := l.Snapshot().Counts; c != (Counts{}) {
		t.Fatalf("invalid writes were counted: %+v", c)
	}
}

func TestReopenKeepsEntriesAndHighestFence(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir)
	mustAppend(t, l, write(10, "a"))
	mustAppend(t, l, write(12, "b"))
	mustAppend(t, l, write(11, "a"))
	l.Close()

	l2 := open(t, dir)
	snap := l2.Snapshot()
	if snap.Highest != 12 || snap.Counts != (Counts{Accepted: 2, Rejected: 1}) || len(snap.Accepted) != 2 {
		t.Fatalf("after reopen: %+v", snap)
	}
	if e := mustAppend(t, l2, write(11, "a")); e.Accepted || e.Seq != 4 {
		t.Fatalf("a stale fence after reopen: %+v, want rejected with seq 4", e)
	}
}

// crashEnv makes the test binary a child that appends one write and dies by SIGKILL after the
// sync, before Append returns: a crash between write and acknowledgement.
const crashEnv = "LEDGER_TEST_CRASH_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashEnv); dir != "" {
		l, err := Open(dir, issuedUpTo(MaxFence))
		if err != nil {
			os.Exit(3)
		}
		l.afterSync = func() { syscall.Kill(os.Getpid(), syscall.SIGKILL) }
		l.Append(context.Background(), write(9, "crashed"))
		os.Exit(4) // not reached: the write was acknowledged
	}
	os.Exit(m.Run())
}

func TestCrashBetweenWriteAndAckKeepsTheWrite(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"="+dir)
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child should have been killed after the sync: %v", err)
	}
	l := open(t, dir)
	snap := l.Snapshot()
	if snap.Highest != 9 || len(snap.Accepted) != 1 || snap.Accepted[0].Holder != "crashed" {
		t.Fatalf("the synced write is lost: %+v", snap)
	}
	if e := mustAppend(t, l, write(8, "old")); e.Accepted {
		t.Fatal("a fence below the crashed write's was accepted")
	}
}

func TestTornLastRecordIsCut(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir)
	mustAppend(t, l, write(3, "a"))
	l.Close()
	path := filepath.Join(dir, FileName)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// An append cut short by a crash, longer than the next record: it must be cut, not
	// partly overwritten.
	f.WriteString(`{"fence":4,"holder":"` + strings.Repeat("b", 400))
	f.Close()

	l2 := open(t, dir)
	if snap := l2.Snapshot(); snap.Counts.Accepted != 1 || snap.Highest != 3 {
		t.Fatalf("after a torn append: %+v, want the one complete record", snap)
	}
	mustAppend(t, l2, write(4, "b"))
	l2.Close()
	if data, _ := os.ReadFile(path); strings.Count(string(data), "\n") != 2 || !strings.HasSuffix(string(data), "}\n") {
		t.Fatalf("the torn record was not cut from the file:\n%s", data)
	}
	l3 := open(t, dir)
	if snap := l3.Snapshot(); snap.Counts.Accepted != 2 || snap.Highest != 4 {
		t.Fatalf("the append after the torn record: %+v", snap)
	}
}

func TestDamagedRecordStopsOpenAndIsNotOverwritten(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir)
	mustAppend(t, l, write(3, "a"))
	mustAppend(t, l, write(4, "a"))
	l.Close()
	path := filepath.Join(dir, FileName)
	data, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(data), "\n")
	damaged := lines[0] + "not json\n" + lines[1]
	os.WriteFile(path, []byte(damaged), 0o644)

	_, err := Open(dir, issuedUpTo(MaxFence))
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), path+" line 2") {
		t.Fatalf("error %v, want ErrDamaged naming %s line 2", err, path)
	}
	if after, _ := os.ReadFile(path); string(after) != damaged {
		t.Fatal("Open changed a file it could not parse")
	}
}

func TestSecondOpenIsRefusedNamingTheHolder(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir)
	mustAppend(t, l, write(3, "a"))
	host, _ := os.Hostname()
	_, err := Open(dir, issuedUpTo(MaxFence))
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d on host %s", os.Getpid(), host)) {
		t.Fatalf("a second Open of a ledger in use: %v, want ErrInUse naming pid %d on host %s", err, os.Getpid(), host)
	}
	// The first one goes on, and once it is closed the directory opens again.
	mustAppend(t, l, write(4, "a"))
	l.Close()
	if snap := open(t, dir).Snapshot(); snap.Highest != 4 || snap.Counts.Accepted != 2 {
		t.Fatalf("after the refused Open: %+v", snap)
	}
}

// TestAppendLandsAtTheEndOfTheFile: a record another writer appended (a server that takes no
// lock, or an operator's tool) is never overwritten: every record goes to the file's end, not
// to an offset the ledger remembers.
func TestAppendLandsAtTheEndOfTheFile(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir)
	mustAppend(t, l, write(3, "a"))
	f, err := os.OpenFile(filepath.Join(dir, FileName), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	other := `{"fence":5,"holder":"other","written_at":"2026-12-01T12:00:00Z","seq":2,"received_at":"2026-12-01T12:00:01Z","accepted":true}` + "\n"
	f.WriteString(other)
	f.Close()
	mustAppend(t, l, write(4, "a"))
	l.Close()
	data, _ := os.ReadFile(filepath.Join(dir, FileName))
	if lines := strings.SplitAfter(string(data), "\n"); len(lines) != 4 || lines[1] != other {
		t.Fatalf("the other writer's record was overwritten:\n%s", data)
	}
}

// TestCrashImageNULTailIsCut: a crash can leave a file longer than what reached the disk, the
// rest NUL bytes (the size was updated, the data never written), and the last of them can be
// the newline of the record that append wrote: a last line of NULs ending in "\n" was never
// acknowledged either, and is cut like a torn line without one.
func TestCrashImageNULTailIsCut(t *testing.T) {
	for name, tail := range map[string]string{
		"NULs and a newline":            strings.Repeat("\x00", 150) + "\n",
		"NULs, a newline, a fragment":   strings.Repeat("\x00", 40) + "\n" + strings.Repeat("\x00", 30),
		"a record's end after NULs":     strings.Repeat("\x00", 60) + `ived_at":"2026-12-01T12:00:02Z","accepted":true}` + "\n",
		"two lines of NULs, no newline": "\x00\x00\x00\n\x00\x00",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			l := open(t, dir)
			mustAppend(t, l, write(3, "a"))
			l.Close()
			path := filepath.Join(dir, FileName)
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(tail)
			f.Close()

			l2, err := Open(dir, issuedUpTo(MaxFence))
			if err != nil {
				t.Fatalf("a crash image's NUL tail stopped Open: %v", err)
			}
			if snap := l2.Snapshot(); snap.Counts.Accepted != 1 || snap.Highest != 3 {
				t.Fatalf("after the NUL tail: %+v, want the one complete record", snap)
			}
			mustAppend(t, l2, write(4, "b"))
			l2.Close()
			data, _ := os.ReadFile(path)
			if strings.ContainsRune(string(data), 0) || strings.Count(string(data), "\n") != 2 {
				t.Fatalf("the NUL tail was not cut from the file:\n%q", data)
			}
		})
	}
}

// TestNULLineBeforeARecordIsDamage: NULs are a torn tail only at the end; before a complete
// record they are damage, and Open stops without touching the file.
func TestNULLineBeforeARecordIsDamage(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir)
	mustAppend(t, l, write(3, "a"))
	mustAppend(t, l, write(4, "a"))
	l.Close()
	path := filepath.Join(dir, FileName)
	data, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(data), "\n")
	damaged := lines[0] + strings.Repeat("\x00", 20) + "\n" + lines[1]
	os.WriteFile(path, []byte(damaged), 0o644)
	if _, err := Open(dir, issuedUpTo(MaxFence)); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), path+" line 2") {
		t.Fatalf("error %v, want ErrDamaged naming %s line 2", err, path)
	}
	if after, _ := os.ReadFile(path); string(after) != damaged {
		t.Fatal("Open changed a file it could not parse")
	}
}

// TestFencesBeyondTheElectionsRangeAreRefused: the election's fences stay below 2^53 (exact in
// JSON everywhere); a larger one was made by no leader, and accepting it would refuse every
// real leader's write from then on.
func TestFencesBeyondTheElectionsRangeAreRefused(t *testing.T) {
	l := open(t, t.TempDir())
	for _, fence := range []uint64{1 << 53, 1<<64 - 1} {
		if _, err := l.Append(context.Background(), write(fence, "anyone")); !errors.Is(err, ErrInvalidWrite) || !strings.Contains(err.Error(), "9007199254740991") {
			t.Errorf("fence %d: error %v, want ErrInvalidWrite naming the largest fence, 9007199254740991", fence, err)
		}
	}
	if e := mustAppend(t, l, write(1796303263919234, "leader")); !e.Accepted {
		t.Fatalf("a leader's write after the refused ones: %+v", e)
	}
	if e := mustAppend(t, l, write(1<<53-1, "last")); !e.Accepted {
		t.Fatalf("the largest fence the election can issue: %+v", e)
	}
}

// TestAFenceBeyondTheRangeInTheFileStopsOpen: a ledger an older server let poison (a fence no
// leader made, accepted from anyone) is not replayed as if it were sound: Open stops naming the
// line, and nothing is written over it.
func TestAFenceBeyondTheRangeInTheFileStopsOpen(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir)
	mustAppend(t, l, write(3, "a"))
	l.Close()
	path := filepath.Join(dir, FileName)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"fence":18446744073709551615,"holder":"anyone","written_at":"2026-12-01T12:00:00Z","seq":2,"received_at":"2026-12-01T12:00:01Z","accepted":true}` + "\n")
	f.Close()
	before, _ := os.ReadFile(path)
	if _, err := Open(dir, issuedUpTo(MaxFence)); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), path+" line 2") || !strings.Contains(err.Error(), "18446744073709551615") {
		t.Fatalf("error %v, want ErrDamaged naming %s line 2 and its fence", err, path)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("Open changed the file")
	}
}

// TestFencesTheElectionHasNotIssuedAreRejected: a fence above the highest the election has
// issued is rejected as not issued — recorded, shown, and never the floor — so a writer that
// makes one up cannot refuse the real leaders' writes, also after a restart. Fences are not
// contiguous: any fence up to the highest issued passes this check.
func TestFencesTheElectionHasNotIssuedAreRejected(t *testing.T) {
	dir := t.TempDir()
	l := openWith(t, dir, issuedUpTo(100))
	steps := []struct {
		fence  uint64
		reason Reason
	}{
		{5, ""},
		{101, NotIssued},
		{MaxFence, NotIssued},
		{100, ""},
		{99, Stale},
	}
	for _, s := range steps {
		e := mustAppend(t, l, write(s.fence, "a"))
		if e.Accepted != (s.reason == "") || e.Reason != s.reason {
			t.Fatalf("fence %d: accepted=%v reason=%q, want reason %q", s.fence, e.Accepted, e.Reason, s.reason)
		}
		if s.reason == NotIssued && (e.Issued != 100 || e.Highest != 0) {
			t.Fatalf("fence %d: issued=%d highest=%d, want the election's 100 and no fence that beat it", s.fence, e.Issued, e.Highest)
		}
	}
	want := Counts{Accepted: 2, Rejected: 3, NotIssued: 2}
	if snap := l.Snapshot(); snap.Highest != 100 || snap.Counts != want {
		t.Fatalf("highest %d, counts %+v; want 100 and %+v", snap.Highest, snap.Counts, want)
	}
	l.Close()
	l2 := openWith(t, dir, issuedUpTo(100))
	snap := l2.Snapshot()
	if snap.Highest != 100 || snap.Counts != want || snap.Rejected[1].Reason != NotIssued || snap.Rejected[1].Issued != 100 {
		t.Fatalf("after a restart: %+v, want the same highest, counts and reasons", snap)
	}
	if e := mustAppend(t, l2, write(100, "a")); !e.Accepted {
		t.Fatalf("the leader's fence after a restart: %+v", e)
	}
}

// TestAnElectionThatCannotBeReadRecordsNothing: a fence the ledger cannot check is neither
// accepted nor rejected, and nothing is recorded; a stale fence needs no check (every accepted
// fence was issued) and is rejected whatever the controllers do.
func TestAnElectionThatCannotBeReadRecordsNothing(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir)
	mustAppend(t, l, write(10, "a"))
	l.Close()
	election := &unreadable{}
	l2 := openWith(t, dir, election)
	if e := mustAppend(t, l2, write(9, "stale")); e.Reason != Stale || election.reads != 0 {
		t.Fatalf("a stale write with the election unreadable: %+v after %d reads, want it rejected as stale without one", e, election.reads)
	}
	if _, err := l2.Append(context.Background(), write(11, "next")); !errors.Is(err, ErrElectionUnknown) {
		t.Fatalf("a write above the highest accepted with the election unreadable: %v, want ErrElectionUnknown", err)
	}
	if snap := l2.Snapshot(); snap.Counts != (Counts{Accepted: 1, Rejected: 1}) {
		t.Fatalf("counts %+v: the unchecked write was recorded", snap.Counts)
	}
}

// TestRejectionsOfOlderVersionsAreStale: a rejected record without a reason, as versions before
// the election's check wrote them, replays as stale.
func TestRejectionsOfOlderVersionsAreStale(t *testing.T) {
	dir := t.TempDir()
	line := `{"fence":3,"holder":"a","written_at":"2026-12-01T12:00:00Z","seq":1,"received_at":"2026-12-01T12:00:01Z","accepted":false,"highest":4}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	if snap := open(t, dir).Snapshot(); snap.Counts != (Counts{Rejected: 1}) || snap.Rejected[0].Reason != Stale {
		t.Fatalf("%+v, want one stale rejection", snap)
	}
}
