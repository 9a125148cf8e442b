package dispatch

// TopoOrder orders a batch whose items depend on earlier items of the
// same batch by index (a jobs[] submit, a run.scatter calls[]): it
// returns the indexes 0..len(deps)-1 so that every item follows the items
// it depends on (deps[i] lists i's dependencies by index, each within
// range). When the dependencies have a cycle it returns nil and the
// items on a cycle or waiting on one, in index order.
func TopoOrder(deps [][]int) (order, stuck []int) {
	n := len(deps)
	indeg := make([]int, n)
	users := make([][]int, n)
	for i, ds := range deps {
		seen := map[int]bool{}
		for _, d := range ds {
			if seen[d] {
				continue
			}
			seen[d] = true
			indeg[i]++
			users[d] = append(users[d], i)
		}
	}
	var ready []int
	for i := range n {
		if indeg[i] == 0 {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		i := ready[0]
		ready = ready[1:]
		order = append(order, i)
		for _, u := range users[i] {
			if indeg[u]--; indeg[u] == 0 {
				ready = append(ready, u)
			}
		}
	}
	if len(order) == n {
		return order, nil
	}
	for i := range n {
		if indeg[i] > 0 {
			stuck = append(stuck, i)
		}
	}
	return nil, stuck
}
