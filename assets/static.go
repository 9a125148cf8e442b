package assets

import (
	"embed"
	"io/fs"
)

//go:embed static/htmx.min.js static/panel.css static/setup.js static/live.js
var static embed.FS

// HTMXVersion is the vendored htmx release (npm htmx.org), and HTMXSHA256
// the SHA-256 of its dist/htmx.min.js as copied; static/NOTICE.md says how
// to upgrade it.
const (
	HTMXVersion = "2.0.11"
	HTMXSHA256  = "d6fdc75f204e6bdefa99b69bf1e6d4ac69b8a364f77929f45c13476b4000f717"
)

// Static returns the control panel's static files (htmx.min.js,
// panel.css, setup.js, live.js) at the root of the returned file system.
func Static() (fs.FS, error) {
	return fs.Sub(static, "static")
}
