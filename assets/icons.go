// Package assets holds Hearth's embedded static files. icons.go covers the
// icons, which scripts/gen-icon draws; regenerate them with
//
//	go run ./scripts/gen-icon -out assets
package assets

import (
	"embed"
	"fmt"
)

//go:embed hearth.ico hearth-*.ico hearth-*.png
var icons embed.FS

// Icon file names. The tray states match docs/DESIGN.md, "Tunnel, tray and recovery": ready, tunnel down,
// e-stop latched, permit waiting. Each .ico holds 16, 20, 24, 32 and 48 px
// images; each state also has a 32 px .png of the same name.
const (
	AppIcon         = "hearth.ico"
	TrayReadyIcon   = "hearth-ready.ico"
	TrayDownIcon    = "hearth-down.ico"
	TrayStoppedIcon = "hearth-stopped.ico"
	TrayPermitIcon  = "hearth-permit.ico"
)

// Icon returns the bytes of an embedded icon file, such as TrayReadyIcon or
// "hearth-256.png".
func Icon(name string) ([]byte, error) {
	b, err := icons.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read embedded icon %s: %w", name, err)
	}
	return b, nil
}
