//go:build !windows

package risk

// versionNames is Windows': other systems' programs carry no version
// resource naming them.
func versionNames(string, map[string]bool) []string { return nil }
