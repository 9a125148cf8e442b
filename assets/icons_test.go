package assets

import (
	"bytes"
	"image/png"
	"testing"
)

func TestIconsEmbedded(t *testing.T) {
	for _, name := range []string{AppIcon, TrayReadyIcon, TrayDownIcon, TrayStoppedIcon, TrayPermitIcon} {
		b, err := Icon(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte{0, 0, 1, 0}) {
			t.Errorf("%s does not start with an ICO header", name)
		}
	}
	for _, name := range []string{"hearth-16.png", "hearth-256.png", "hearth-permit.png"} {
		b, err := Icon(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(bytes.NewReader(b)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Icon("missing.ico"); err == nil {
		t.Error("Icon(missing.ico) succeeded")
	}
}
