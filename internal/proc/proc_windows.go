package proc

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unicode/utf16"
	"unsafe"

	"golang.org/x/sys/windows"
)

// killExitCode is the exit code Hearth gives the processes it terminates.
// A killed leader reporting it is shown as ExitCode -1.
const killExitCode = 1

// maxWalks bounds how often Kill re-reads the process table looking for
// children created while it was terminating the ones it already knew. A
// terminated process creates no more children, so the walks converge.
const maxWalks = 10

// cpUTF8 is CP_UTF8, the code page number of UTF-8.
const cpUTF8 = 65001

// procGetOEMCP is not wrapped by x/sys/windows; kernel32 always has it.
var procGetOEMCP = windows.NewLazySystemDLL("kernel32.dll").NewProc("GetOEMCP")

// group is the Windows handle on a child's process tree: a Job Object.
// Every process the child creates joins the job automatically, so
// TerminateJobObject reaches the whole tree, and because the job is
// created with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE the tree also dies when
// the last handle closes — after Run, or when Hearth itself exits or
// crashes, which a process group on Unix cannot promise.
//
// The child is created suspended and only resumed once it is in the job.
// Assigning a running child would leave a window in which it could start
// a grandchild outside the job, beyond the reach of a timeout.
type group struct {
	job windows.Handle

	mu        sync.Mutex
	proc      windows.Handle // the leader, once it is in the job
	cancelled bool           // kill ran before the leader was in the job

	swept chan struct{} // closed when the exit watcher has finished
}

func newGroup() (*group, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("create job object: %w", err)
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	// DIE_ON_UNHANDLED_EXCEPTION: a crashing child ends at once instead of
	// waiting on an error-reporting dialog nobody sees until the timeout.
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE |
		windows.JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return nil, fmt.Errorf("configure job object: %w", err)
	}
	return &group{job: job}, nil
}

// sysProcAttr creates the child suspended (see group), without a console
// window (Hearth is a tray app; a flashing console per command would be
// alarming), and in its own console process group so that a Ctrl+C or
// Ctrl+Break aimed at Hearth's console does not reach it.
func (g *group) sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NO_WINDOW | windows.CREATE_NEW_PROCESS_GROUP,
	}
}

// started puts the still-suspended child into the job, resumes it, and
// arranges for leftovers to be killed as soon as it exits. The batch-file
// check is made here, on the path exec really started, because the child
// has not run a single instruction yet.
func (g *group) started(cmd *exec.Cmd) error {
	pid := uint32(cmd.Process.Pid)
	if isBatch(cmd.Path, cmd.Dir) {
		if err := batchArgProblem(cmd.Args[1:]); err != nil {
			return err
		}
	}
	return g.adopt(pid)
}

// adopt is started for the suspended process pid, however it was created.
func (g *group) adopt(pid uint32) error {
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|windows.SYNCHRONIZE, false, pid)
	if err != nil {
		return fmt.Errorf("open process %d: %w", pid, err)
	}
	if err := windows.AssignProcessToJobObject(g.job, h); err != nil {
		_ = windows.CloseHandle(h)
		return fmt.Errorf("assign process %d to job object: %w", pid, err)
	}
	g.mu.Lock()
	g.proc = h
	cancelled := g.cancelled
	g.mu.Unlock()
	if cancelled {
		// The context ended while the child was being set up: it dies
		// without ever having run.
		_ = windows.TerminateJobObject(g.job, killExitCode)
	} else if err := resumeProcess(pid); err != nil {
		return fmt.Errorf("resume process %d: %w", pid, err)
	}
	g.swept = make(chan struct{})
	go func() {
		defer close(g.swept)
		// Kill leftovers the moment the leader exits: exec.Cmd.Wait also
		// waits for the output pipes, which a leftover keeps open, so
		// leaving them to the job's kill-on-close after Wait would make
		// such commands take the full PipeGrace.
		if ev, err := windows.WaitForSingleObject(h, windows.INFINITE); err == nil && ev == windows.WAIT_OBJECT_0 {
			_ = windows.TerminateJobObject(g.job, killExitCode)
		}
	}()
	return nil
}

// kill is exec.Cmd.Cancel: it terminates every process in the job.
func (g *group) kill(*os.Process) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.proc == 0 {
		g.cancelled = true // started terminates the child before resuming it
		return nil
	}
	if err := windows.TerminateJobObject(g.job, killExitCode); err != nil {
		return fmt.Errorf("terminate job object: %w", err)
	}
	return nil
}

// close releases the job; kill-on-close ends anything still in it.
func (g *group) close() {
	if g.swept != nil {
		<-g.swept
	}
	g.mu.Lock()
	h := g.proc
	g.proc = 0
	g.mu.Unlock()
	if h != 0 {
		_ = windows.CloseHandle(h)
	}
	_ = windows.CloseHandle(g.job)
}

// exitCode maps the code Hearth's own termination left to -1, so callers
// see "killed" the same way on every OS.
func exitCode(state *os.ProcessState, killed bool) int {
	if state == nil {
		return -1
	}
	code := state.ExitCode()
	if killed && code == killExitCode {
		return -1
	}
	return code
}

// resumeProcess resumes the threads of a process created suspended. The
// Go runtime closes the primary thread handle CreateProcess returned, so
// the thread is found again through a toolhelp snapshot; a suspended new
// process has exactly that one thread.
func resumeProcess(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("snapshot threads: %w", err)
	}
	defer windows.CloseHandle(snap)
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return fmt.Errorf("open thread %d: %w", te.ThreadID, err)
		}
		_, err = windows.ResumeThread(th)
		_ = windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("resume thread %d: %w", te.ThreadID, err)
		}
		resumed++
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return fmt.Errorf("snapshot threads: %w", err)
	}
	if resumed == 0 {
		return errors.New("no thread to resume")
	}
	return nil
}

// isBatch reports whether path is a .bat or .cmd file, which CreateProcess
// runs through cmd.exe. exec resolves a missing extension at Start without
// writing it back to cmd.Path, so it is resolved again the same way here.
func isBatch(path, dir string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	if ext == "" {
		p := path
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		if lp, err := exec.LookPath(p); err == nil {
			ext = strings.ToLower(filepath.Ext(lp))
		}
	}
	return ext == ".bat" || ext == ".cmd"
}

// decodeLegacy is Decode's fallback on Windows. A child Hearth starts runs
// in its own hidden console, whose code page is the OEM one unless Hearth
// shares a console whose output code page was set (chcp); console tools
// (cmd, ipconfig, PowerShell) write in that code page. The ANSI code page
// (what many non-console programs use) comes last, then Latin-1. UTF-8 is
// skipped: the bytes already failed to be UTF-8.
func decodeLegacy(b []byte) (string, string) {
	var cps []uint32
	if cp, err := windows.GetConsoleOutputCP(); err == nil {
		cps = append(cps, cp)
	}
	if procGetOEMCP.Find() == nil {
		cp, _, _ := procGetOEMCP.Call()
		cps = append(cps, uint32(cp))
	}
	cps = append(cps, windows.GetACP())
	for _, cp := range cps {
		if cp == 0 || cp == cpUTF8 {
			continue
		}
		if s, ok := decodeCodePage(b, cp); ok {
			return s, "cp" + strconv.FormatUint(uint64(cp), 10)
		}
	}
	return latin1(b), "latin-1"
}

func decodeCodePage(b []byte, cp uint32) (string, bool) {
	if len(b) == 0 {
		return "", true
	}
	if len(b) > math.MaxInt32 {
		return "", false
	}
	n, err := windows.MultiByteToWideChar(cp, 0, &b[0], int32(len(b)), nil, 0)
	if err != nil || n <= 0 {
		return "", false
	}
	u := make([]uint16, n)
	n, err = windows.MultiByteToWideChar(cp, 0, &b[0], int32(len(b)), &u[0], n)
	if err != nil || n <= 0 {
		return "", false
	}
	// utf16.Decode rather than UTF16ToString: output may contain NULs.
	return string(utf16.Decode(u[:n])), true
}

// Kill terminates pid and, when tree is set, its descendants, applying no
// policy of its own. Windows does not reparent orphans: a child keeps its
// dead parent's pid as parent id, and that pid may since belong to an
// unrelated process. Kill therefore holds a handle on every process it
// terminates (so their pids cannot be reused during the walk) and only
// treats a process as a child if it was created after its parent. Hearth's
// own process, if it is in the tree, is terminated last.
func Kill(pid int, tree bool) error {
	if pid <= 0 || pid > math.MaxUint32 {
		return fmt.Errorf("kill process %d: invalid pid", pid)
	}
	self := windows.GetCurrentProcessId()
	root, err := openForKill(uint32(pid))
	if err != nil {
		return err
	}
	held := map[uint32]heldProc{uint32(pid): root}
	defer func() {
		for _, p := range held {
			_ = windows.CloseHandle(p.h)
		}
	}()
	var errs []error
	terminate := func(id uint32, p heldProc) {
		if id == self {
			return
		}
		if err := windows.TerminateProcess(p.h, killExitCode); err != nil && running(p.h) {
			errs = append(errs, fmt.Errorf("terminate process %d: %w", id, err))
		}
	}
	terminate(uint32(pid), root)
	if tree {
		errs = append(errs, killDescendants(held, terminate))
	}
	if _, ok := held[self]; ok {
		errs = append(errs, windows.TerminateProcess(windows.CurrentProcess(), killExitCode))
	}
	return errors.Join(errs...)
}

// heldProc is a process Kill holds open, with its creation time.
type heldProc struct {
	h       windows.Handle
	created int64
}

func openForKill(pid uint32) (heldProc, error) {
	h, err := windows.OpenProcess(windows.PROCESS_TERMINATE|windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE, false, pid)
	if err != nil {
		if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
			return heldProc{}, fmt.Errorf("open process %d: %w", pid, ErrNotFound)
		}
		return heldProc{}, fmt.Errorf("open process %d: %w", pid, err)
	}
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		_ = windows.CloseHandle(h)
		return heldProc{}, fmt.Errorf("process %d times: %w", pid, err)
	}
	return heldProc{h: h, created: created.Nanoseconds()}, nil
}

// killDescendants walks the process table from the processes in held,
// terminating and holding every real child found, until a walk finds
// nothing new.
func killDescendants(held map[uint32]heldProc, terminate func(uint32, heldProc)) error {
	rejected := map[uint32]bool{}
	var errs []error
	for range maxWalks {
		entries, err := processEntries()
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		children := map[uint32][]uint32{}
		for _, e := range entries {
			if e.ProcessID != e.ParentProcessID {
				children[e.ParentProcessID] = append(children[e.ParentProcessID], e.ProcessID)
			}
		}
		queue := make([]uint32, 0, len(held))
		for id := range held {
			queue = append(queue, id)
		}
		found := false
		for len(queue) > 0 {
			parent := queue[0]
			queue = queue[1:]
			for _, c := range children[parent] {
				if _, ok := held[c]; ok || rejected[c] {
					continue
				}
				p, err := openForKill(c)
				if err != nil {
					if !errors.Is(err, ErrNotFound) {
						errs = append(errs, err)
					}
					rejected[c] = true
					continue
				}
				if p.created < held[parent].created {
					// Older than its supposed parent: it descends from an
					// earlier owner of that pid.
					_ = windows.CloseHandle(p.h)
					rejected[c] = true
					continue
				}
				held[c] = p
				terminate(c, p)
				found = true
				queue = append(queue, c)
			}
		}
		if !found {
			break
		}
	}
	return errors.Join(errs...)
}

// running reports whether the process behind h has not yet exited;
// TerminateProcess fails on a process that is already gone, which is not
// a failure to kill it.
func running(h windows.Handle) bool {
	ev, err := windows.WaitForSingleObject(h, 0)
	return err == nil && ev == uint32(windows.WAIT_TIMEOUT)
}
