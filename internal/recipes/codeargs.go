package recipes

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hearth-dev/hearth/internal/govern"
)

// A parameter value is data: it may fill an argv element or part of one,
// but never text that a program runs as code. So a ${name} placeholder is
// refused, when a recipe is created and again before each run:
//
//   - in the command of a machine.exec or task.submit step (a value would
//     choose the program);
//   - for an interpreter (govern.IsInterpreter, plus dash and versioned
//     python names), in any argument before its script: its options (a
//     value such as "-c" would turn the next argument into code), the code
//     given with a script flag (sh/bash/zsh/dash -c, python -c or -m, node
//     -e/-p/--eval/--print, perl -e/-E, ruby -e), and the script path;
//   - in every argument of cmd.exe, of a .bat or .cmd script (cmd parses
//     the whole command line itself, after /c or /k as a command), of wsl
//     (a Linux shell command line) and of mshta;
//   - for powershell and pwsh, in every argument after -Command (-c),
//     -EncodedCommand (-e, -ec) or the first argument that is not an
//     option, all of which PowerShell joins into code; after -File and its
//     literal path, arguments are data;
//   - for cscript and wscript, in their //options and the script path;
//   - for any other program govern.IsInterpreter names, in every argument;
//   - in every argument of a launcher (env, xargs, sudo, nice, timeout, …),
//     which starts another program named in its arguments;
//   - in the name of an environment variable, and in the value of PATH or
//     of a variable that makes programs load or run other code
//     (govern.IsLoaderEnv: LD_PRELOAD, BASH_ENV, NODE_OPTIONS, …).
//
// Arguments after an interpreter's literal script path, and after the
// literal -c code of sh/bash/zsh/dash and python (which end option parsing
// there), are data: `python script.py ${x}` and `sh -c 'echo "$1"' sh ${x}`
// are allowed. perl, ruby and node keep reading options after -e code, so
// there a placeholder must follow "--" or a literal argument that is not
// an option. Options Hearth does not know are taken as flags without a
// value (for perl, ruby and node, conservatively, any short option holding
// a letter that can take a value consumes the next argument).

// hasPlaceholder reports whether s holds a ${name} placeholder ($${ is a
// literal and does not count). A malformed placeholder counts.
func hasPlaceholder(s string) bool {
	found := false
	_, err := expand(s, func(string) (string, error) { found = true; return "", nil })
	return found || err != nil
}

// checkCodePlaceholders refuses placeholders where a step would run them
// as code. v is the step's decoded input template and at its position
// ("steps[2].input"); the error names the field.
func checkCodePlaceholders(op, prim string, v any, at string) error {
	obj, _ := v.(map[string]any)
	switch prim {
	case "machine.exec":
		return checkProgram(op, at, obj)
	case "task.submit":
		if job, ok := obj["job"].(map[string]any); ok {
			if err := checkProgram(op, at+".job", job); err != nil {
				return err
			}
		}
		jobs, _ := obj["jobs"].([]any)
		for k, j := range jobs {
			job, _ := j.(map[string]any)
			if err := checkProgram(op, fmt.Sprintf("%s.jobs[%d]", at, k), job); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkProgram checks one {command, args} object.
func checkProgram(op, at string, obj map[string]any) error {
	if obj == nil {
		return nil
	}
	command, _ := obj["command"].(string)
	if hasPlaceholder(command) {
		return invalid(op, at+".command", "a ${…} placeholder may not choose the program to run, so a parameter value could run as code; name the program literally and pass values as its arguments")
	}
	if env, ok := obj["env"].(map[string]any); ok {
		keys := make([]string, 0, len(env))
		for k := range env {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			v, _ := env[k].(string)
			switch {
			case hasPlaceholder(k):
				return invalid(op, at+".env", "a ${…} placeholder may not name an environment variable; name it literally")
			case (govern.IsLoaderEnv(k) || strings.EqualFold(k, "PATH")) && hasPlaceholder(v):
				return invalid(op, at+".env."+k, "a ${…} placeholder may not fill %s, which chooses the programs or code that run", k)
			}
		}
	}
	raw, _ := obj["args"].([]any)
	args := make([]string, len(raw))
	for j, a := range raw {
		args[j], _ = a.(string)
	}
	roles := argRoles(command, args)
	for j, a := range args {
		if roles[j] != "" && hasPlaceholder(a) {
			return invalid(op, fmt.Sprintf("%s.args[%d]", at, j), "a ${…} placeholder may not appear here: %s, so a parameter value could run as code. Pass values as separate arguments after a script file (or after the -c code of sh or python), where they are plain data", roles[j])
		}
	}
	return nil
}

// programBase is the lower-case base name of a program without ".exe",
// the way govern.IsInterpreter compares names.
func programBase(command string) string {
	base := strings.ToLower(filepath.Base(strings.ReplaceAll(command, `\`, "/")))
	return strings.TrimSuffix(base, ".exe")
}

// argRoles says, for each argument of command, why a placeholder there
// would be code ("" when the argument is data).
func argRoles(command string, args []string) []string {
	roles := make([]string, len(args))
	base := programBase(command)
	if strings.HasPrefix(base, "python") && strings.Trim(base[len("python"):], "0123456789.w") == "" {
		base = "python" // python3.12, pythonw, pythonw3
	}
	if base == "pyw" {
		base = "py"
	}
	all := func(why string) []string {
		for j := range roles {
			roles[j] = why
		}
		return roles
	}
	switch {
	case slices.Contains(launchers, base):
		return all(base + " starts another program named in its arguments, so a value there could choose that program or become its code")
	case base == "cmd" || strings.HasSuffix(base, ".bat") || strings.HasSuffix(base, ".cmd"):
		return all("cmd.exe parses its whole command line itself and runs what follows /c or /k as a command (a .bat or .cmd script's arguments go through cmd.exe too)")
	case base == "wsl":
		return all("wsl runs its arguments as a Linux shell command line")
	case base == "mshta":
		return all("mshta runs its argument as a script")
	case base == "powershell" || base == "pwsh":
		return powershellRoles(base, args, roles)
	case base == "cscript" || base == "wscript":
		return wshRoles(base, args, roles)
	}
	if f, ok := optionFamilies[base]; ok {
		return f.roles(base, args, roles)
	}
	if govern.IsInterpreter(command) {
		return all(fmt.Sprintf("%s is an interpreter whose script arguments Hearth does not know", base))
	}
	return roles
}

// launchers start another program given in their arguments (env, xargs,
// sudo, …): any argument may name the program or its code.
var launchers = []string{"env", "xargs", "nice", "nohup", "timeout", "stdbuf", "setsid", "sudo", "doas", "su",
	"runuser", "chroot", "busybox", "time", "ionice", "taskset", "unshare", "nsenter", "flock", "watch",
	"script", "ssh", "start", "runas", "schtasks", "at", "rundll32", "regsvr32", "msiexec", "forfiles", "wmic"}

// optionFamily describes how an interpreter reads its options, enough to
// find where its code and script end.
type optionFamily struct {
	// plus: options may also start with + (sh -o / +o).
	plus bool
	// codeFlag: sh's -c, a flag that makes the first argument that is not
	// an option the code.
	codeFlag byte
	// code: letters whose value (the rest of the argument, or the next
	// argument) is code; module: letters whose value names code to load.
	code, module string
	// value: letters that take a value; precise (getopt-like, python)
	// or, when loose, any option containing one of these letters (or a
	// code or module letter) is taken to consume the next argument.
	value string
	loose bool
	// longCode / longValue: long options whose next argument (or
	// "=value") is code / a value.
	longCode, longValue []string
	// endsAtCode: option parsing ends with the code or module (sh,
	// python), so the arguments after it are data.
	endsAtCode bool
}

var optionFamilies = map[string]*optionFamily{
	"sh":     shFamily,
	"bash":   shFamily,
	"zsh":    shFamily,
	"dash":   shFamily,
	"python": pythonFamily,
	"py":     pythonFamily,
	"node":   {loose: true, code: "ep", value: "rC", longCode: []string{"--eval", "--print"}, longValue: []string{"--require", "--import", "--loader", "--experimental-loader", "--conditions", "--input-type", "--title", "--env-file", "--inspect-port", "--redirect-warnings", "--icu-data-dir", "--openssl-config", "--disable-warning"}},
	"perl":   {loose: true, code: "eE", module: "Mm", value: "I"},
	"ruby":   {loose: true, code: "e", module: "r", value: "ICEx", longValue: []string{"--encoding", "--external-encoding", "--internal-encoding", "--enable", "--disable", "--dump", "--jit-disable"}},
}

var (
	shFamily     = &optionFamily{plus: true, codeFlag: 'c', value: "oO", longValue: []string{"--rcfile", "--init-file"}, endsAtCode: true}
	pythonFamily = &optionFamily{code: "c", module: "m", value: "WX", longValue: []string{"--check-hash-based-pycs"}, endsAtCode: true}
)

func (f *optionFamily) roles(name string, args []string, roles []string) []string {
	option := fmt.Sprintf("%s reads this argument as one of its options (a value such as -c would make code of the next argument)", name)
	// codeMode is sh's -c option; haveCode, that perl, ruby or node was
	// given its code, so no script path follows.
	codeMode, haveCode := "", false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--" || a == "-":
			roles[i] = option
			return f.operand(name, args, roles, i+1, codeMode, haveCode)
		case haveCode && hasPlaceholder(a):
			// perl, ruby and node read options after their code until the
			// first argument that is not one; a value starting with -
			// would be one.
			roles[i] = fmt.Sprintf("%s still reads options after its code, and a value starting with - would be one of them (put a literal -- before it)", name)
			return roles
		case strings.HasPrefix(a, "--"):
			roles[i] = option
			opt, _, attached := strings.Cut(a, "=")
			isCode := slices.Contains(f.longCode, opt)
			if (isCode || slices.Contains(f.longValue, opt)) && !attached && i+1 < len(args) {
				i++
				roles[i] = fmt.Sprintf("%s reads this argument as the value of %s", name, opt)
				if isCode {
					roles[i] = fmt.Sprintf("%s runs the argument after %s as code", name, opt)
				}
			}
			if isCode && f.endsAtCode {
				return roles
			}
			haveCode = haveCode || isCode
		case len(a) > 1 && (a[0] == '-' || f.plus && a[0] == '+'):
			roles[i] = option
			if f.codeFlag != 0 && strings.IndexByte(a[1:], f.codeFlag) >= 0 {
				codeMode = a
			}
			if f.loose {
				if strings.ContainsAny(a[1:], f.code+f.module+f.value) && i+1 < len(args) {
					i++
					roles[i] = fmt.Sprintf("%s may read this argument as the value of %s", name, a)
					if strings.ContainsAny(a[1:], f.code) {
						roles[i] = fmt.Sprintf("%s runs the argument after %s as code", name, a)
					}
				}
				haveCode = haveCode || strings.ContainsAny(a[1:], f.code)
				continue
			}
			// Precise: the first letter that takes a value takes the rest
			// of the argument or, if none, the next argument.
			for k := 1; k < len(a); k++ {
				c := a[k]
				kind := ""
				switch {
				case strings.IndexByte(f.code, c) >= 0:
					kind = "code"
				case strings.IndexByte(f.module, c) >= 0:
					kind = "module"
				case strings.IndexByte(f.value, c) >= 0:
					kind = "value"
				}
				if kind == "" {
					continue
				}
				if k == len(a)-1 && i+1 < len(args) {
					i++
					switch kind {
					case "code":
						roles[i] = fmt.Sprintf("%s runs the argument after %s as code", name, a)
					case "module":
						roles[i] = fmt.Sprintf("%s runs the module the argument after %s names", name, a)
					default:
						roles[i] = fmt.Sprintf("%s reads this argument as the value of %s", name, a)
					}
				}
				if kind != "value" && f.endsAtCode {
					return roles
				}
				break
			}
		case strings.HasPrefix(a, "${"):
			what := "its script"
			if codeMode != "" {
				what = "its shell code (with " + codeMode + ")"
			}
			roles[i] = fmt.Sprintf("%s reads this argument as one of its options if the value starts with -, and otherwise as %s", name, what)
			if haveCode {
				roles[i] = fmt.Sprintf("%s still reads options after its code, and a value starting with - would be one of them (put a literal -- before it)", name)
			}
			return roles
		default:
			return f.operand(name, args, roles, i, codeMode, haveCode)
		}
	}
	return roles
}

// operand marks args[i], the interpreter's code (after sh -c) or script
// path, unless it was given code already; the arguments after it are data.
func (f *optionFamily) operand(name string, args []string, roles []string, i int, codeMode string, haveCode bool) []string {
	if i < len(args) && !haveCode {
		roles[i] = fmt.Sprintf("%s runs the script this argument names", name)
		if codeMode != "" {
			roles[i] = fmt.Sprintf("%s runs this argument as shell code (it is the first argument after the options, with %s)", name, codeMode)
		}
	}
	return roles
}

// powershellRoles: -Command, -EncodedCommand and a first argument that is
// not an option make code of every argument after; -File takes a script
// path, after which arguments are data.
func powershellRoles(name string, args []string, roles []string) []string {
	option := fmt.Sprintf("%s reads this argument as one of its options (a value such as -Command would make code of the arguments after it)", name)
	valueOpts := []string{"executionpolicy", "exec", "ex", "ep", "windowstyle", "win", "w", "inputformat", "inp", "if", "outputformat", "out", "of", "o",
		"version", "v", "configurationname", "config", "psconsolefile", "workingdirectory", "wd", "custompipename", "settingsfile"}
	rest := func(from int, why string) []string {
		for j := from; j < len(args); j++ {
			roles[j] = why
		}
		return roles
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !(strings.HasPrefix(a, "-") || strings.HasPrefix(a, "/")) || a == "-" {
			return rest(i, fmt.Sprintf("%s joins its arguments from the first one that is not an option into a command it runs as PowerShell code", name))
		}
		roles[i] = option
		opt, _, attached := strings.Cut(strings.ToLower(strings.TrimLeft(a, "-/")), ":")
		switch {
		case opt != "" && (strings.HasPrefix("command", opt) || strings.HasPrefix("commandwithargs", opt) || opt == "cwa"):
			return rest(i+1, fmt.Sprintf("%s joins the arguments after %s into a command it runs as PowerShell code", name, a))
		case opt == "e" || opt == "ec" || len(opt) >= 2 && strings.HasPrefix("encodedcommand", opt):
			return rest(i+1, fmt.Sprintf("%s runs the argument after %s as PowerShell code", name, a))
		case opt != "" && strings.HasPrefix("file", opt):
			if i+1 < len(args) {
				roles[i+1] = fmt.Sprintf("%s runs the script this argument names", name)
			}
			return roles
		case slices.Contains(valueOpts, opt) && !attached && i+1 < len(args):
			i++
			roles[i] = fmt.Sprintf("%s reads this argument as the value of %s", name, a)
		}
	}
	return roles
}

// wshRoles: cscript and wscript options start with //; the first other
// argument is the script path, and the arguments after it are data.
func wshRoles(name string, args []string, roles []string) []string {
	for i, a := range args {
		if strings.HasPrefix(a, "//") {
			roles[i] = fmt.Sprintf("%s reads this argument as one of its options (such as //E:engine)", name)
			continue
		}
		roles[i] = fmt.Sprintf("%s runs the script this argument names", name)
		break
	}
	return roles
}
