package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/ledger"
)

// openOffline opens this user's database without serving it, for the
// ledger and safety commands.
func openOffline(ctx context.Context) (*app.Offline, error) {
	dataDir, err := config.DataDir()
	if err != nil {
		return nil, err
	}
	return app.OpenOffline(ctx, dataDir, config.Path(dataDir))
}

// ledgerCmd implements `ledger verify [BUNDLE]` and `ledger export --out FILE`.
func ledgerCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{"ledger: want verify [BUNDLE] or export --out FILE"}
	}
	switch args[0] {
	case "verify":
		fs := flag.NewFlagSet("ledger verify", flag.ContinueOnError)
		fs.SetOutput(stderr)
		key := fs.String("key", "", "expected public key (note verifier key) of the bundle")
		if err := fs.Parse(args[1:]); err != nil {
			return usageError{err.Error()}
		}
		var opts []ledger.VerifyOption
		if *key != "" {
			opts = append(opts, ledger.ExpectKey(*key))
		}
		if fs.NArg() > 1 {
			return usageError{"ledger verify: at most one bundle file"}
		}
		var rep ledger.Report
		var err error
		if fs.NArg() == 1 {
			// "-" reads the bundle from standard input (for example one
			// read over MCP as a resource and piped in).
			var in io.Reader = os.Stdin
			if fs.Arg(0) != "-" {
				f, ferr := os.Open(fs.Arg(0))
				if ferr != nil {
					return ferr
				}
				defer f.Close()
				in = f
			}
			rep, err = ledger.VerifyBundle(in, opts...)
		} else {
			off, oerr := openOffline(ctx)
			if oerr != nil {
				return oerr
			}
			defer off.Close()
			if *key == "" {
				// Pin the live check to this installation's own signing key,
				// so a ledger rewritten and re-signed with another key fails.
				opts = append(opts, ledger.ExpectKey(off.Ledger.PublicKey()))
			}
			rep, err = ledger.VerifyDB(ctx, off.DB, opts...)
		}
		if err != nil {
			return fmt.Errorf("ledger verification failed: %w", err)
		}
		if rep.Subset {
			fmt.Fprintf(stdout, "evidence OK: %d entries (%s), each proven included in the checkpoint of %d entries signed by %s, root %s\n",
				rep.Entries, rep.Scope, rep.CheckpointSize, rep.Origin, rep.RootHash)
			return nil
		}
		fmt.Fprintf(stdout, "ledger OK: %d entries; the newest checkpoint covers %d, %d came after it; signed by %s, root %s\n",
			rep.Entries, rep.CheckpointSize, rep.Unsigned, rep.Origin, rep.RootHash)
		return nil
	case "export":
		fs := flag.NewFlagSet("ledger export", flag.ContinueOnError)
		fs.SetOutput(stderr)
		out := fs.String("out", "", "bundle file to write")
		since := fs.Int64("since", -1, "prove consistency from this checkpoint size (default: the previous export)")
		if err := fs.Parse(args[1:]); err != nil {
			return usageError{err.Error()}
		}
		if *out == "" {
			return usageError{"ledger export: --out FILE is required"}
		}
		off, err := openOffline(ctx)
		if err != nil {
			return err
		}
		defer off.Close()
		if err := off.Ledger.ExportFile(ctx, *out, *since); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", *out)
		return nil
	}
	return usageError{fmt.Sprintf("ledger: unknown subcommand %q", args[0])}
}
