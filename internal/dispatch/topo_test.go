package dispatch

import (
	"slices"
	"testing"
)

func TestTopoOrder(t *testing.T) {
	cases := []struct {
		deps  [][]int
		stuck []int
	}{
		{[][]int{{}, {0}, {0}, {1, 2}}, nil},                 // diamond
		{[][]int{{1}, {}, {0, 0}}, nil},                      // duplicate dependency
		{[][]int{{1}, {2}, {0}, {}, {2}}, []int{0, 1, 2, 4}}, // cycle and a waiter
		{[][]int{{0}}, []int{0}},                             // self
		{nil, nil},
	}
	for _, tc := range cases {
		order, stuck := TopoOrder(tc.deps)
		if !slices.Equal(stuck, tc.stuck) {
			t.Errorf("%v: stuck %v, want %v", tc.deps, stuck, tc.stuck)
			continue
		}
		if tc.stuck != nil {
			if order != nil {
				t.Errorf("%v: order %v with a cycle", tc.deps, order)
			}
			continue
		}
		pos := map[int]int{}
		for p, i := range order {
			pos[i] = p
		}
		if len(order) != len(tc.deps) {
			t.Fatalf("%v: order %v", tc.deps, order)
		}
		for i, ds := range tc.deps {
			for _, d := range ds {
				if pos[d] > pos[i] {
					t.Errorf("%v: %d before its dependency %d in %v", tc.deps, i, d, order)
				}
			}
		}
	}
}
