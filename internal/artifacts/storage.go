package artifacts

import "fmt"

// StorageLine says how much of storage_budget_bytes the stored copies use:
// "12.3 MiB of 1.0 GiB (1%)", or "12.3 MiB (no budget)".
func StorageLine(used, budget int64) string {
	if budget <= 0 {
		return HumanBytes(used) + " (no budget)"
	}
	return fmt.Sprintf("%s of %s (%d%%)", HumanBytes(used), HumanBytes(budget), used*100/budget)
}

// HumanBytes renders n in B, KiB, MiB or GiB.
func HumanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
