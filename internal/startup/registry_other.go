//go:build !windows

package startup

// The registry is Windows' alone: on other systems its sources give no
// origins (the index of another OS is tested through its parsers).

func runOrigins(host) []origin { return nil }

func serviceOrigins(host) []origin { return nil }

func excelAddinOrigins(host) []origin { return nil }
