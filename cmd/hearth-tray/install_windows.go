package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/autostart"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/instance"
	"github.com/hearth-dev/hearth/internal/removetree"
	"github.com/hearth-dev/hearth/internal/secrets"
	"github.com/hearth-dev/hearth/internal/tray"
	"github.com/hearth-dev/hearth/internal/tunnel"
)

// quitWait bounds how long uninstall waits for a running Hearth to stop.
const quitWait = 60 * time.Second

// install copies this program to %LOCALAPPDATA%\Programs\Hearth, registers
// the logon task for that copy, creates the Start-menu shortcut and starts
// the installed tray, saying what it did at each step.
func install(ctx context.Context, stdout io.Writer) error {
	src, err := thisProgram()
	if err != nil {
		return err
	}
	dir, err := autostart.ProgramDir()
	if err != nil {
		return err
	}
	dst := filepath.Join(dir, autostart.ExeName)
	dataDir, err := config.DataDir()
	if err != nil {
		return err
	}
	if autostart.SameFile(src, dst) {
		fmt.Fprintf(stdout, "Hearth is installed at %s (this program)\n", dst)
	} else {
		if pid, ok := runningPID(dataDir); ok {
			return fmt.Errorf("Hearth is running (pid %d): quit it from its tray icon (Quit Hearth), then run install again", pid)
		}
		if err := autostart.CopyExe(src, dst); errors.Is(err, autostart.ErrInUse) {
			return fmt.Errorf("%w: quit Hearth from its tray icon (Quit Hearth), then run install again", err)
		} else if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Copied this program to %s\n", dst)
	}
	if err := copyTunnelClient(filepath.Dir(src), dir, stdout); err != nil {
		return err
	}
	if err := autostart.Enable(dst); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Registered the logon task %s: at logon and every minute it runs \"%s\" ensure\n", autostart.TaskName, dst)
	lnk, err := autostart.ShortcutPath()
	if err != nil {
		return err
	}
	if err := autostart.CreateShortcut(lnk, dst, dir, "Hearth: your PC's governed MCP host"); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Created the Start-menu shortcut %s\n", lnk)
	res, err := autostart.Ensure(ctx, autostart.EnsureOptions{DataDir: dataDir, Exe: dst})
	if err != nil {
		return fmt.Errorf("start the installed Hearth: %w", err)
	}
	switch res.Outcome {
	case autostart.Started:
		fmt.Fprintf(stdout, "Started Hearth (pid %d); its icon is in the notification area\n", res.PID)
	default:
		fmt.Fprintln(stdout, "Hearth is already running")
	}
	return nil
}

// uninstall removes the logon task (first, so that it cannot start Hearth
// again meanwhile), stops a running Hearth through its tray's control
// endpoint, and removes the shortcut and the program directory. The data
// directory is kept unless purge.
func uninstall(ctx context.Context, purge bool, stdout io.Writer) error {
	dir, err := autostart.ProgramDir()
	if err != nil {
		return err
	}
	lnk, err := autostart.ShortcutPath()
	if err != nil {
		return err
	}
	dataDir, err := config.DataDir()
	if err != nil {
		return err
	}

	if on, err := autostart.Enabled(); err == nil && !on {
		fmt.Fprintf(stdout, "No logon task %s was registered\n", autostart.TaskName)
	} else {
		if err := autostart.Disable(); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Removed the logon task %s\n", autostart.TaskName)
	}

	if pid, ok := runningPID(dataDir); ok {
		if err := tray.Ask(ctx, dataDir, tray.ReqQuit); err != nil {
			return fmt.Errorf("Hearth is running (pid %d) and could not be asked to quit (%v): quit it from its tray icon, or stop `hearth-tray serve`, then run uninstall again", pid, err)
		}
		if !waitStopped(ctx, dataDir, quitWait) {
			return fmt.Errorf("Hearth (pid %d) was asked to quit but still runs after %s; run uninstall again once it has stopped", pid, quitWait)
		}
		fmt.Fprintf(stdout, "Stopped Hearth (pid %d)\n", pid)
	}

	if err := os.Remove(lnk); err == nil {
		fmt.Fprintf(stdout, "Removed the Start-menu shortcut %s\n", lnk)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the Start-menu shortcut: %w", err)
	}

	if _, err := os.Stat(dir); err == nil {
		// A running program cannot be deleted, but it can be renamed: when
		// uninstall runs from the installed copy, that copy moves to the
		// temporary directory first.
		if self, err := thisProgram(); err == nil && inDir(self, dir) {
			f, err := os.CreateTemp("", "hearth-tray-uninstalled-*.exe")
			if err == nil {
				aside := f.Name()
				f.Close()
				if err = os.Rename(self, aside); err == nil {
					fmt.Fprintf(stdout, "This program ran from %s; it was moved to %s (delete it when it has exited)\n", dir, aside)
				} else {
					os.Remove(aside)
				}
			}
		}
		if err := removetree.All(dir); err != nil {
			return fmt.Errorf("remove the program directory: %w", err)
		}
		fmt.Fprintf(stdout, "Removed the program directory %s\n", dir)
	}

	if !purge {
		fmt.Fprintf(stdout, "Kept your data in %s (uninstall --purge deletes it)\n", dataDir)
		return nil
	}
	if store, err := secrets.Open(dataDir); err == nil {
		if err := store.Delete(tunnel.KeyName); err == nil {
			fmt.Fprintln(stdout, "Deleted the stored tunnel key")
		} else if !errors.Is(err, secrets.ErrNotFound) {
			return fmt.Errorf("delete the stored tunnel key: %w", err)
		}
	}
	if err := removetree.All(dataDir); err != nil {
		return fmt.Errorf("delete the data directory: %w", err)
	}
	fmt.Fprintf(stdout, "Deleted the data directory %s\n", dataDir)
	return nil
}

// thisProgram is the running executable's path, links resolved.
func thisProgram() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find this program: %w", err)
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return p, nil
}

// inDir reports whether path lies inside dir (compared as Windows does,
// ignoring case).
func inDir(path, dir string) bool {
	rel, err := filepath.Rel(strings.ToLower(filepath.Clean(dir)), strings.ToLower(filepath.Clean(path)))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, `..\`) && rel != "."
}

// runningPID reports whether a Hearth holds the instance lock of dataDir,
// and its pid when instance.json names it.
func runningPID(dataDir string) (int, bool) {
	l, err := instance.Acquire(instance.LockHearth, dataDir)
	if err == nil {
		l.Release()
		return 0, false
	}
	if !errors.Is(err, instance.ErrAlreadyRunning) {
		return 0, false
	}
	info, _ := instance.ReadInfo(dataDir)
	return info.PID, true
}

// waitStopped waits until no Hearth holds the instance lock of dataDir.
func waitStopped(ctx context.Context, dataDir string, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for {
		if _, running := runningPID(dataDir); !running {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(200 * time.Millisecond)
	}
}
