package checkexe

import (
	"bytes"
	"debug/pe"
	"encoding/binary"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
)

// win10GUID is the supportedOS Id of Windows 10 and 11 in a manifest's
// compatibility section.
const win10GUID = "{8e0f7a12-bfb3-4fe8-b9a5-48fd50a15a9a}"

// TestShippedExe reads back the executable HEARTH_EXE names (a
// scripts/build-windows output): it must be a GUI-subsystem program
// (double-click and the logon task show no console window) carrying the
// manifest, icon group and version info of winres/winres.json.
// HEARTH_EXE_VERSION, when set, must appear in the version strings.
func TestShippedExe(t *testing.T) {
	path := os.Getenv("HEARTH_EXE")
	if path == "" {
		t.Skip("HEARTH_EXE is not set (scripts/test-sign sets it to the built hearth-tray.exe)")
	}
	f, err := pe.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	var subsystem uint16
	switch oh := f.OptionalHeader.(type) {
	case *pe.OptionalHeader64:
		subsystem = oh.Subsystem
	case *pe.OptionalHeader32:
		subsystem = oh.Subsystem
	default:
		t.Fatalf("%s has no optional header", path)
	}
	if subsystem != pe.IMAGE_SUBSYSTEM_WINDOWS_GUI {
		t.Errorf("subsystem is %d, want %d (WINDOWS_GUI: link with -H windowsgui)", subsystem, pe.IMAGE_SUBSYSTEM_WINDOWS_GUI)
	}

	res, err := Resources(f)
	if err != nil {
		t.Fatal(err)
	}
	byType := map[int][]Resource{}
	for _, r := range res {
		byType[r.Type] = append(byType[r.Type], r)
	}

	manifests := byType[rtManifest]
	if len(manifests) != 1 {
		t.Fatalf("%d manifests, want 1", len(manifests))
	}
	m, err := parseManifest(manifests[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	if m.executionLevel != "asInvoker" {
		t.Errorf("manifest requestedExecutionLevel is %q, want asInvoker", m.executionLevel)
	}
	// Windows reads dpiAwareness case-insensitively, first known value
	// wins; the others are fallbacks for older Windows.
	if first, _, _ := strings.Cut(m.dpiAwareness, ","); !strings.EqualFold(strings.TrimSpace(first), "PerMonitorV2") {
		t.Errorf("manifest dpiAwareness is %q, want PerMonitorV2 first", m.dpiAwareness)
	}
	if !slices.Contains(m.supportedOS, win10GUID) {
		t.Errorf("manifest supportedOS %v lacks Windows 10's %s", m.supportedOS, win10GUID)
	}

	groups := byType[rtGroupIcon]
	if len(groups) == 0 {
		t.Fatal("no icon group (RT_GROUP_ICON)")
	}
	icons := map[int]bool{}
	for _, r := range byType[rtIcon] {
		icons[r.ID] = true
	}
	for _, g := range groups {
		// GRPICONDIR: reserved, type 1, count; then 14-byte entries whose
		// last two bytes are the RT_ICON id.
		d := g.Data
		if len(d) < 6 || binary.LittleEndian.Uint16(d[2:]) != 1 {
			t.Fatalf("icon group %d is not a GRPICONDIR", g.ID)
		}
		n := int(binary.LittleEndian.Uint16(d[4:]))
		if n == 0 || len(d) < 6+14*n {
			t.Fatalf("icon group %d: %d images in %d bytes", g.ID, n, len(d))
		}
		for i := range n {
			id := int(binary.LittleEndian.Uint16(d[6+14*i+12:]))
			if !icons[id] {
				t.Errorf("icon group %d names icon %d, which is missing", g.ID, id)
			}
		}
	}

	versions := byType[rtVersion]
	if len(versions) != 1 {
		t.Fatalf("%d version resources, want 1", len(versions))
	}
	vi, err := ParseVersionInfo(versions[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"ProductName": "Hearth", "FileDescription": "Hearth tray",
		"OriginalFilename": "hearth-tray.exe", "InternalName": "hearth-tray",
	} {
		if vi.Strings[key] != want {
			t.Errorf("version string %s = %q, want %q", key, vi.Strings[key], want)
		}
	}
	if v := os.Getenv("HEARTH_EXE_VERSION"); v != "" {
		want := strings.TrimPrefix(v, "v")
		for _, key := range []string{"ProductVersion", "FileVersion"} {
			if !strings.Contains(vi.Strings[key], want) {
				t.Errorf("version string %s = %q, want it to carry %q", key, vi.Strings[key], want)
			}
		}
		// -X main.version stamps the same text into the program itself.
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(v)) {
			t.Errorf("%s does not contain its version %q (main.version)", path, v)
		}
	}
	t.Logf("%s: GUI subsystem, manifest, %d icon group(s), version %v %q", path, len(groups), vi.FileVersion, vi.Strings["ProductVersion"])
}

// manifest is what TestShippedExe reads from the application manifest.
type manifest struct {
	executionLevel string
	dpiAwareness   string
	supportedOS    []string
}

// parseManifest reads the manifest's XML by element name, whatever the
// namespaces.
func parseManifest(b []byte) (manifest, error) {
	var m manifest
	dec := xml.NewDecoder(bytes.NewReader(b))
	var inDPI bool
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return m, nil
		}
		if err != nil {
			return m, fmt.Errorf("manifest XML: %w", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			attr := func(name string) string {
				for _, a := range el.Attr {
					if a.Name.Local == name {
						return a.Value
					}
				}
				return ""
			}
			switch el.Name.Local {
			case "requestedExecutionLevel":
				m.executionLevel = attr("level")
			case "supportedOS":
				m.supportedOS = append(m.supportedOS, attr("Id"))
			case "dpiAwareness":
				inDPI = true
			}
		case xml.CharData:
			if inDPI {
				m.dpiAwareness += string(el)
			}
		case xml.EndElement:
			inDPI = false
		}
	}
}
