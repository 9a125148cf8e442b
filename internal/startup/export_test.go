package startup

// Lnk is lnk (index_test.go) for the package's external tests: a Shell
// Link as Windows writes one.
var Lnk = lnk
