package artifacts

import "testing"

func TestStorageLine(t *testing.T) {
	for _, tc := range []struct {
		used, budget int64
		want         string
	}{
		{12 << 20, 1 << 30, "12.0 MiB of 1.0 GiB (1%)"},
		{512, 0, "512 B (no budget)"},
		{3 << 30, 2 << 30, "3.0 GiB of 2.0 GiB (150%)"},
	} {
		if got := StorageLine(tc.used, tc.budget); got != tc.want {
			t.Errorf("StorageLine(%d, %d) = %q, want %q", tc.used, tc.budget, got, tc.want)
		}
	}
}
