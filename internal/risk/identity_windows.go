package risk

import (
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
)

// versionNames returns the table names the version resource of the
// program at path gives it (OriginalFilename, InternalName: "Cmd.Exe.MUI",
// "cmd", "pwsh.dll" all name their program), for the names in want. A
// renamed copy keeps its version resource.
func versionNames(path string, want map[string]bool) []string {
	size, err := windows.GetFileVersionInfoSize(path, nil)
	if err != nil || size == 0 {
		return nil
	}
	buf := make([]byte, size)
	if err := windows.GetFileVersionInfo(path, 0, size, unsafe.Pointer(&buf[0])); err != nil {
		return nil
	}
	langs := []string{"040904b0", "040904e4", "04090000", "000004b0"}
	var tr unsafe.Pointer
	var trLen uint32
	if windows.VerQueryValue(unsafe.Pointer(&buf[0]), `\VarFileInfo\Translation`, unsafe.Pointer(&tr), &trLen) == nil && tr != nil {
		pairs := unsafe.Slice((*[2]uint16)(tr), trLen/4)
		for _, p := range pairs {
			langs = append([]string{fmt.Sprintf("%04x%04x", p[0], p[1])}, langs...)
		}
	}
	var names []string
	for _, lang := range langs {
		for _, field := range []string{"OriginalFilename", "InternalName"} {
			var v *uint16
			var n uint32
			if windows.VerQueryValue(unsafe.Pointer(&buf[0]), `\StringFileInfo\`+lang+`\`+field, unsafe.Pointer(&v), &n) != nil || v == nil || n == 0 {
				continue
			}
			name := versionProgramName(windows.UTF16PtrToString(v))
			if want[name] && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	return names
}

// versionProgramName is the table name of a version resource's file
// name: without case, ".mui", an extension (".exe", ".dll", ".com") and a
// trailing version.
func versionProgramName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimSuffix(s, ".mui")
	for _, ext := range []string{".exe", ".dll", ".com"} {
		s = strings.TrimSuffix(s, ext)
	}
	return ProgramName(s)
}
