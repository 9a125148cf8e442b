// Command ziptool makes and lists ZIP files for scripts/test's package
// phase, which builds a stand-in tunnel-client release ZIP and checks the
// members of the package, without needing zip or unzip on the machine.
//
//	ziptool create OUT.zip FILE...   each FILE stored under its base name
//	ziptool list ZIP                 one member name a line
package main

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ziptool:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: ziptool create OUT.zip FILE... | list ZIP")
	}
	switch args[0] {
	case "create":
		return create(args[1], args[2:])
	case "list":
		zr, err := zip.OpenReader(args[1])
		if err != nil {
			return err
		}
		defer zr.Close()
		for _, f := range zr.File {
			fmt.Println(f.Name)
		}
		return nil
	}
	return fmt.Errorf("unknown command %q", args[0])
}

func create(out string, files []string) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	for _, name := range files {
		in, err := os.Open(name)
		if err != nil {
			return err
		}
		w, err := zw.Create(filepath.Base(name))
		if err == nil {
			_, err = io.Copy(w, in)
		}
		in.Close()
		if err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}
