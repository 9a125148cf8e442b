package demo

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// ChildArg, as the first argument, switches the demo program into its
// child role: Child interprets the arguments after it as one small job and
// does nothing else. The demo runs itself (os.Executable) as the program
// behind every exec, job and recipe step, so it needs no shell and no
// POSIX tools and runs the same on Windows. The role is chosen by an
// argument, not an environment variable, because an operator's allow-rule
// covers only harmless environment variables: the demo's calls are the
// ones a model would make under the rule.
const ChildArg = "demo-child"

// childArgs are the arguments of an exec, job or recipe step that runs
// the child job args.
func childArgs(args ...string) []string { return append([]string{ChildArg}, args...) }

// Child runs the child role when args begin with ChildArg and reports
// whether it did. Programs that the demo may run as its child
// (hearth-tray, the demo test binary) call it before anything else. The
// jobs are:
//
//	lines N              print N numbered lines (see childLines)
//	echo WORD...         print the words and a newline
//	sleep-echo MS WORD...  wait MS milliseconds, then echo
//	append FILE LINE     append LINE and a newline to FILE
//	log LINE             append LINE to jobs.log in the current folder
//	count LINE           append LINE to replay-counter.txt in the current folder
//
// log and count name no file in their arguments: an allow-rule pins every
// existing file its call's arguments name, and these files grow with each
// call, so a rule naming them would ask again after the first.
func Child(args []string, stdout io.Writer) (handled bool, err error) {
	if len(args) == 0 || args[0] != ChildArg {
		return false, nil
	}
	return true, runChild(args[1:], stdout)
}

func runChild(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("demo child: no job given")
	}
	switch op, rest := args[0], args[1:]; op {
	case "lines":
		if len(rest) != 1 {
			return errors.New("demo child: lines N")
		}
		n, err := strconv.Atoi(rest[0])
		if err != nil || n < 0 {
			return fmt.Errorf("demo child: lines: bad count %q", rest[0])
		}
		_, err = io.WriteString(stdout, childLines(n))
		return err
	case "echo":
		_, err := fmt.Fprintln(stdout, strings.Join(rest, " "))
		return err
	case "sleep-echo":
		if len(rest) < 1 {
			return errors.New("demo child: sleep-echo MS WORD...")
		}
		ms, err := strconv.Atoi(rest[0])
		if err != nil || ms < 0 {
			return fmt.Errorf("demo child: sleep-echo: bad delay %q", rest[0])
		}
		time.Sleep(time.Duration(ms) * time.Millisecond)
		_, err = fmt.Fprintln(stdout, strings.Join(rest[1:], " "))
		return err
	case "append":
		if len(rest) != 2 {
			return errors.New("demo child: append FILE LINE")
		}
		return appendLine(rest[0], rest[1])
	case "log", "count":
		if len(rest) != 1 {
			return fmt.Errorf("demo child: %s LINE", op)
		}
		name := jobsLogName
		if op == "count" {
			name = replayCounterName
		}
		return appendLine(name, rest[0])
	}
	return fmt.Errorf("demo child: unknown job %q", args[0])
}

// appendLine appends line and a newline to the file at path.
func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("demo child: %w", err)
	}
	_, err = fmt.Fprintln(f, line)
	return errors.Join(err, f.Close())
}

// childLines is exactly what `lines n` prints, so the demo can compare an
// artifact read back by range with what the child wrote.
func childLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "hearth demo line %05d of %05d\n", i, n)
	}
	return b.String()
}
