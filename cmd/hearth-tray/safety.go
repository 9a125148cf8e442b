package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/instance"
	"github.com/hearth-dev/hearth/internal/peeruser"
)

// safetyCmd implements `safety reset --operator NAME` and `safety status`.
// Reset requires an interactive terminal and typing "reset", a guard
// against accidental or scripted use, and is refused to a program the
// running Hearth started (refuseHearthsOwn): a model's program can have a
// terminal (an interactive session's pty), but it descends from Hearth.
func safetyCmd(ctx context.Context, args []string, stdin *os.File, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{"safety: want status, or reset --operator NAME"}
	}
	switch args[0] {
	case "status":
		off, err := openOffline(ctx)
		if err != nil {
			return err
		}
		defer off.Close()
		st, err := off.Gov.EStop(ctx)
		if err != nil {
			return err
		}
		held, _ := off.Gov.QueueHeld(ctx)
		if st.Latched {
			fmt.Fprintf(stdout, "e-stop LATCHED by %s at %s: %s\n", st.By, st.At.Format("2006-01-02 15:04:05Z07:00"), st.Reason)
		} else {
			fmt.Fprintln(stdout, "e-stop released")
		}
		fmt.Fprintf(stdout, "queue held: %v\npolicy mode: %s\n", held, off.Gov.Mode(ctx))
		return nil
	case "reset":
		fs := flag.NewFlagSet("safety reset", flag.ContinueOnError)
		fs.SetOutput(stderr)
		operator := fs.String("operator", "", "your name, recorded in the ledger")
		if err := fs.Parse(args[1:]); err != nil {
			return usageError{err.Error()}
		}
		if strings.TrimSpace(*operator) == "" {
			return usageError{"safety reset: --operator NAME is required"}
		}
		if err := refuseHearthsOwn(); err != nil {
			return err
		}
		if !isTerminal(stdin) {
			return errors.New("safety reset needs an interactive terminal: run it yourself in a console")
		}
		fmt.Fprint(stdout, "Type reset to release the emergency stop: ")
		line, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && line == "" {
			return fmt.Errorf("read confirmation: %w", err)
		}
		if strings.TrimSpace(line) != "reset" {
			return errors.New("not confirmed; the e-stop stays latched")
		}
		off, err := openOffline(ctx)
		if err != nil {
			return err
		}
		defer off.Close()
		// Journaled with where it was made, as the panel's reset is
		// with how its session was signed in.
		if err := off.Operator.Reset(govern.WithOrigin(ctx, govern.OriginTerminal), *operator); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "e-stop released. The job queue stays held until you resume it in the control panel.")
		return nil
	}
	return usageError{fmt.Sprintf("safety: unknown subcommand %q", args[0])}
}

// refuseHearthsOwn refuses an operator command run by a program the
// running Hearth of this data directory started, directly or through
// programs that exited since (on Linux Hearth adopts those,
// peeruser.AdoptOrphans): that is the model's reach, never the
// operator's. Without a running Hearth, or when this process's ancestry
// cannot be read, nothing is refused here (the terminal check still
// applies).
func refuseHearthsOwn() error {
	dataDir, err := config.DataDir()
	if err != nil {
		return err
	}
	info, err := instance.ReadInfo(dataDir)
	if err != nil || info.PID <= 0 || info.PID == os.Getpid() {
		return nil
	}
	if own, err := peeruser.DescendsFrom(os.Getpid(), info.PID); err == nil && own {
		return errors.New("this was started by a program Hearth runs (ChatGPT's reach): only you can do this, in a console you opened yourself")
	}
	return nil
}
