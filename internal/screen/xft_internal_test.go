//go:build !windows

package screen

import "testing"

// TestXftScale reads Xft.dpi among a desktop's other resources, and
// answers 1 for none or a value that is no DPI.
func TestXftScale(t *testing.T) {
	for db, want := range map[string]float64{
		"Xcursor.size:\t24\nXft.dpi:\t120\nXft.antialias:\t1\n": 1.25,
		"Xft.dpi: 192":                     2,
		"Xft.antialias:\t1\n":              1,
		"":                                 1,
		"Xft.dpi:\tlarge\n":                1,
		"Xft.dpi:\t0\n":                    1,
		"Xft.dpiextra:\t144\nXft.dpi:96\n": 1,
	} {
		if got := xftScale(db); got != want {
			t.Errorf("xftScale(%q) = %v, want %v", db, got, want)
		}
	}
}
