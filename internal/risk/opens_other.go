//go:build !windows

package risk

// registeredHandler is the program an extension is registered to open
// with: none off Windows (Linux's runs-when-opened test is the table,
// the execute bit and the content).
func registeredHandler(string) handlerInfo { return handlerInfo{} }
