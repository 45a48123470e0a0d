package heapfloor

import "testing"

// TestFloorPercent: the percentage makes the runtime's goal — max(live × (1 + p/100), 4 MB ×
// p/100) — the larger of the floor and twice the live heap, and is GOGC's default once twice
// the live heap reaches the floor.
func TestFloorPercent(t *testing.T) {
	goal := func(live uint64, p int) uint64 {
		return max(live+live*uint64(p)/100, runtimeHeapMinimum*uint64(p)/100)
	}
	for _, live := range []uint64{0, 1, 512 << 10, 1300 << 10, 2 << 20, heapFloorBytes / 3, 3 << 20, 7 << 19, heapFloorBytes/2 - 1, heapFloorBytes / 2, 5 << 20, 64 << 20} {
		p := floorPercent(live)
		want := max(uint64(heapFloorBytes), 2*live)
		got := goal(live, p)
		// Integer percentages round the goal down by up to 1 % of the live heap's share.
		if got > want || want-got > want/100 {
			t.Errorf("live %d: percent %d makes a goal of %d, want %d", live, p, got, want)
		}
		if 2*live >= heapFloorBytes && p != 100 {
			t.Errorf("live %d (half the floor or more): percent %d, want GOGC's default 100", live, p)
		}
	}
}
