package risk_test

import (
	"testing"

	"github.com/hearth-dev/hearth/internal/risk"
)

// TestPythonLauncherTypesAreNotOrdinary: on Windows the Python
// launcher (py.exe, installed with Python from python.org) runs .pyz,
// .pyzw, .pyc and .pyo files when they are double-clicked, like .py and
// .pyw, which the allowlist already refuses to call ordinary.
func TestPythonLauncherTypesAreNotOrdinary(t *testing.T) {
	w := risk.NewWritesFor(true, func(k string) string {
		return map[string]string{"USERPROFILE": `C:\Users\Ann`, "PATHEXT": ".COM;.EXE;.BAT;.CMD"}[k]
	}, nil)
	for _, p := range []string{`C:\Users\Ann\Desktop\x.pyz`, `C:\Users\Ann\Desktop\x.pyzw`, `C:\Users\Ann\Desktop\x.pyc`, `C:\Users\Ann\Desktop\x.pyo`} {
		if why, ok := w.Classify(risk.FileFacts{Path: p, Root: `C:\Users\Ann`}); ok {
			t.Errorf("%s is ordinary (%q): written on the Desktop with no card, it runs when opened", p, why)
		}
	}
}
