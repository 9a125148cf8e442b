package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/hearth-dev/hearth/internal/proc"
)

// kernel32 calls for the pseudo-console that are looked up before use:
// x/sys/windows' wrappers panic where the function does not exist (a
// Windows before 10 1809, Wine without ConPTY).
var (
	kernel32                      = windows.NewLazySystemDLL("kernel32.dll")
	procCreatePseudoConsole       = kernel32.NewProc("CreatePseudoConsole")
	procUpdateProcThreadAttribute = kernel32.NewProc("UpdateProcThreadAttribute")
)

// procWineGetVersion exists only in Wine's ntdll.
var procWineGetVersion = windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version")

// available reports whether this Windows has a ConPTY that works. Wine
// (8.0) has CreatePseudoConsole, but a program started on its
// pseudo-console with the standard handles left empty — as ConPTY needs,
// so that the program does not write to Hearth's own output instead —
// gets no console input or output at all and ends at once; Hearth says so
// rather than start sessions that cannot be talked to.
func available() error {
	if err := procCreatePseudoConsole.Find(); err != nil {
		return fmt.Errorf("%w: this Windows has no ConPTY (CreatePseudoConsole, Windows 10 1809 or later): %v", ErrUnavailable, err)
	}
	if procWineGetVersion.Find() == nil {
		return fmt.Errorf("%w: this is Wine, whose ConPTY gives a program no console input or output", ErrUnavailable)
	}
	return nil
}

// conpty is a program on a Windows pseudo-console, in a Job Object
// (internal/proc) that kills its tree on Kill, when it exits and with
// Hearth.
type conpty struct {
	hpc  windows.Handle
	in   *os.File // what Hearth types
	out  *os.File // what the console shows, as VT text
	proc windows.Handle
	pid  uint32
	job  *proc.Job

	closeConsole sync.Once
	closeAll     sync.Once
}

func startTerminal(ctx context.Context, s startSpec) (terminal, error) {
	if err := available(); err != nil {
		return nil, err
	}
	return startConPTY(ctx, s)
}

// startConPTY starts s on a new pseudo-console (available has been
// checked: the tests call it directly where the console is half there).
func startConPTY(ctx context.Context, s startSpec) (*conpty, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path, err := exec.LookPath(s.Command)
	if err != nil {
		return nil, fmt.Errorf("find %q: %w", s.Command, err)
	}
	env, err := proc.Environ(withTerm(s.Env))
	if err != nil {
		return nil, err
	}
	var inR, inW, outR, outW windows.Handle
	if err := windows.CreatePipe(&inR, &inW, nil, 0); err != nil {
		return nil, fmt.Errorf("create the console's input pipe: %w", err)
	}
	if err := windows.CreatePipe(&outR, &outW, nil, 0); err != nil {
		windows.CloseHandle(inR)
		windows.CloseHandle(inW)
		return nil, fmt.Errorf("create the console's output pipe: %w", err)
	}
	t := &conpty{in: os.NewFile(uintptr(inW), "conpty-input"), out: os.NewFile(uintptr(outR), "conpty-output")}
	var hpc windows.Handle
	err = windows.CreatePseudoConsole(windows.Coord{X: int16(s.Cols), Y: int16(s.Rows)}, inR, outW, 0, &hpc)
	// The console holds its own copies of its ends.
	windows.CloseHandle(inR)
	windows.CloseHandle(outW)
	if err != nil {
		t.in.Close()
		t.out.Close()
		return nil, fmt.Errorf("%w: create a pseudo-console: %v", ErrUnavailable, err)
	}
	t.hpc = hpc
	if err := t.spawn(path, s, env); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// spawn creates the program suspended on the console and hands it to a
// job, which resumes it.
func (t *conpty) spawn(path string, s startSpec, env []string) error {
	attrs, err := windows.NewProcThreadAttributeList(1)
	if err != nil {
		return fmt.Errorf("make the start attributes: %w", err)
	}
	defer attrs.Delete()
	// The attribute's value is the console handle itself, not a pointer to
	// it, so the call is made directly rather than through Update.
	if r, _, err := procUpdateProcThreadAttribute.Call(uintptr(unsafe.Pointer(attrs.List())), 0,
		windows.PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE, uintptr(t.hpc), unsafe.Sizeof(t.hpc), 0, 0); r == 0 {
		return fmt.Errorf("attach the pseudo-console to the start attributes: %w", err)
	}
	si := &windows.StartupInfoEx{ProcThreadAttributeList: attrs.List()}
	si.Cb = uint32(unsafe.Sizeof(*si))
	// No standard handles of Hearth's: the program's are the console's.
	si.Flags = windows.STARTF_USESTDHANDLES
	cmdline, err := windows.UTF16PtrFromString(windows.ComposeCommandLine(append([]string{path}, s.Args...)))
	if err != nil {
		return fmt.Errorf("command line: %w", err)
	}
	var dir *uint16
	if s.Dir != "" {
		if dir, err = windows.UTF16PtrFromString(s.Dir); err != nil {
			return fmt.Errorf("working directory: %w", err)
		}
	}
	block, err := envBlock(env)
	if err != nil {
		return err
	}
	job, err := proc.NewJob()
	if err != nil {
		return err
	}
	var pi windows.ProcessInformation
	flags := uint32(windows.EXTENDED_STARTUPINFO_PRESENT | windows.CREATE_UNICODE_ENVIRONMENT | windows.CREATE_SUSPENDED)
	if err := windows.CreateProcess(nil, cmdline, nil, nil, false, flags, &block[0], dir, &si.StartupInfo, &pi); err != nil {
		job.Close()
		return fmt.Errorf("start %s on the pseudo-console: %w", path, err)
	}
	windows.CloseHandle(pi.Thread)
	t.proc, t.pid, t.job = pi.Process, pi.ProcessId, job
	if err := job.Adopt(pi.ProcessId); err != nil {
		_ = windows.TerminateProcess(pi.Process, 1)
		return fmt.Errorf("contain %s: %w", path, err)
	}
	return nil
}

// envBlock is env as CreateProcess takes it: NUL-terminated UTF-16
// entries and one more NUL.
func envBlock(env []string) ([]uint16, error) {
	var b []uint16
	for _, kv := range env {
		if strings.ContainsRune(kv, 0) {
			return nil, errors.New("environment entry contains a NUL character")
		}
		u, err := windows.UTF16FromString(kv)
		if err != nil {
			return nil, err
		}
		b = append(b, u...)
	}
	if len(b) == 0 {
		b = append(b, 0)
	}
	return append(b, 0), nil
}

func (t *conpty) Read(p []byte) (int, error)  { return t.out.Read(p) }
func (t *conpty) Write(p []byte) (int, error) { return t.in.Write(p) }
func (t *conpty) PID() int                    { return int(t.pid) }

func (t *conpty) Kill() error { return t.job.Kill() }

// Wait waits for the program, then closes the pseudo-console, which
// flushes what it still shows and ends the output.
func (t *conpty) Wait() int {
	code := -1
	if ev, err := windows.WaitForSingleObject(t.proc, windows.INFINITE); err == nil && ev == windows.WAIT_OBJECT_0 {
		var c uint32
		if windows.GetExitCodeProcess(t.proc, &c) == nil {
			code = int(int32(c))
		}
	}
	t.closeConsole.Do(func() { windows.ClosePseudoConsole(t.hpc) })
	return code
}

// Close releases the console, the pipes, the process and the job.
func (t *conpty) Close() error {
	t.closeAll.Do(func() {
		if t.hpc != 0 {
			t.closeConsole.Do(func() { windows.ClosePseudoConsole(t.hpc) })
		}
		t.in.Close()
		t.out.Close()
		if t.proc != 0 {
			windows.CloseHandle(t.proc)
		}
		if t.job != nil {
			t.job.Close()
		}
	})
	return nil
}
