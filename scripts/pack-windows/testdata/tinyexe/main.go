// Command tinyexe is a small Go program the pack-windows tests build for
// Windows to stand in for hearth-tray.exe: a real PE file with Go build
// information, quick to build.
package main

func main() {}
