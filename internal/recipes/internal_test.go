package recipes

import (
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	params := map[string]string{"a": "A ${b}", "b": "B"}
	get := func(n string) (string, error) { return params[n], nil }
	for _, c := range []struct{ in, want, err string }{
		{"plain", "plain", ""},
		{"${a}", "A ${b}", ""}, // not recursive
		{"x-${a}-${b}-y", "x-A ${b}-B-y", ""},
		{"$${a}", "${a}", ""},
		{"$$${a}", "$${a}", ""}, // "$" then the escape
		{"$ {a} $a", "$ {a} $a", ""},
		{"${", "", "unterminated"},
		{"${a", "", "unterminated"},
		{"${}", "", "parameter name"},
		{"${a b}", "", "parameter name"},
		{"${9}", "", "parameter name"},
	} {
		got, err := expand(c.in, get)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("expand(%q): error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("expand(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestFindPatterns(t *testing.T) {
	h := strings.Fields("a b c a b c x a b c y y y y y y")
	pats := findPatterns(h, 3, 2)
	if len(pats) != 1 || strings.Join(pats[0].Primitives, ",") != "a,b,c" || pats[0].Count != 3 {
		t.Fatalf("patterns: %+v", pats)
	}
	// Overlapping occurrences count once: "a a a a" holds "a a" twice.
	if pats := findPatterns(strings.Fields("a b a b a b"), 3, 2); len(pats) != 1 || strings.Join(pats[0].Primitives, ",") != "a,b" {
		t.Fatalf("non-overlapping: %+v", pats)
	}
	if pats := findPatterns(strings.Fields("a b a b"), 3, 2); len(pats) != 0 {
		t.Fatalf("below threshold: %+v", pats)
	}
	if pats := findPatterns(nil, 3, 2); pats == nil || len(pats) != 0 {
		t.Fatalf("empty history: %+v", pats)
	}
}

// TestCodeArguments: which arguments of which programs a placeholder may
// fill. "!" marks an argument where a placeholder is refused; the roles of
// literal arguments show where the parser thinks code and options end.
func TestCodeArguments(t *testing.T) {
	for _, c := range []struct {
		command string
		args    string // space-separated; "!" prefix = a placeholder there is refused
	}{
		{"printf", "%s ${x} ${y}"},
		{"env", "!sh !-c !${x}"},
		{"pythonw", "!-c !${x}"},
		{`C:\Python312\pythonw.exe`, "!${x}"},
		{"php", "!-r !${x}"},
		{"awk", "!${x}"},
		{"deno", "!eval !${x}"},
		{"/usr/bin/env", "!FOO=1 !python3 !script.py !${x}"},
		{"sudo", "!-u !root !${x}"},
		{"nice", "!-n !5 !bash !-c !${x}"},
		{"xargs", "!-0 !sh !-c !${x}"},
		{"timeout", "!5 !${x}"},
		{"git", "commit -m ${msg}"},
		{"sh", "!-c !exit"},
		{"/bin/bash", "!-c !script a0 ${x} ${y}"},
		{"bash", "!-ec !script a0 ${x}"},
		{"bash", "!-c !-x !script a0 ${x}"},
		{"bash", "!-o !pipefail !-c !script a0 ${x}"},
		{"zsh", "!-c !--  !script ${x}"},
		{"dash", "!script.sh ${x} ${y}"},
		{"sh", "!-e !script.sh ${x}"},
		{"sh", "!+x !script.sh ${x}"},
		{"python3", "!script.py ${x}"},
		{"python3.12", "!-c !code ${x} ${y}"},
		{"python", "!-ccode ${x}"},
		{"python", "!-m !module ${x}"},
		{"python", "!-W !ignore !script.py ${x}"},
		{"python", "!-Bc !code ${x}"},
		{`C:\Python\python.exe`, "!-u !script.py ${x}"},
		{"py", "!-3.12 !script.py ${x}"},
		{"node", "!app.js ${x}"},
		{"node", "!-e !code !${x} --inspect"},
		{"node", "!-e !code !-- ${x} ${y}"},
		{"node", "!--eval !code file ${x}"},
		{"node", "!--eval !code !${f} ${x}"},
		{"node", "!-pe !code file ${x}"},
		{"node", "!--require !mod !app.js ${x}"},
		{"node", "!--eval=code file ${x}"},
		{"perl", "!-e !code !-e !more file ${x}"},
		{"perl", "!-lane !code file ${x}"},
		{"perl", "!-lane !code !pre-${x}"},
		{"perl", "!-w !script.pl ${x}"},
		{"perl", "!-Mstrict !x !script.pl ${x}"},
		{"ruby", "!-e !code !-- ${x}"},
		{"ruby", "!script.rb ${x}"},
		{"cmd", "!/c !echo !${x}"},
		{"cmd.exe", "!/k !x"},
		{`C:\tools\build.bat`, "!a !b"},
		{"run.CMD", "!a"},
		{"wsl", "!ls !${x}"},
		{"mshta", "!x"},
		{"powershell", "!-NoProfile !-Command !Write-Output !x"},
		{"powershell.exe", "!-c !x !y"},
		{"pwsh", "!-EncodedCommand !x"},
		{"pwsh", "!-ec !x"},
		{"powershell", "!Get-Date !x"},
		{"powershell", "!-ExecutionPolicy !Bypass !-File !s.ps1 ${x} ${y}"},
		{"pwsh", "!-NoProfile !-ep !Bypass !-f !s.ps1 ${x}"},
		{"cscript", "!//nologo !script.vbs ${x}"},
		{"wscript", "!${x}"},
	} {
		var args []string
		var want []bool
		for _, a := range strings.Fields(c.args) {
			want = append(want, strings.HasPrefix(a, "!"))
			args = append(args, strings.TrimPrefix(a, "!"))
		}
		roles := argRoles(c.command, args)
		for j := range args {
			if got := roles[j] != ""; got != want[j] {
				t.Errorf("%s %v: argument %d (%q) refused=%v, want %v (%q)", c.command, args, j, args[j], got, want[j], roles[j])
			}
		}
	}
}

// TestEnvPlaceholders: a placeholder may not name an environment
// variable, nor fill one that makes programs load or run other code; other
// values are data.
func TestEnvPlaceholders(t *testing.T) {
	for _, c := range []struct {
		env  map[string]any
		want string // "" = allowed, else the field named
	}{
		{map[string]any{"GREETING": "hello ${name}"}, ""},
		{map[string]any{"${key}": "1"}, "steps[0].input.env"},
		{map[string]any{"LD_PRELOAD": "${lib}"}, "steps[0].input.env.LD_PRELOAD"},
		{map[string]any{"bash_env": "/tmp/${x}"}, "steps[0].input.env.bash_env"},
		{map[string]any{"NODE_OPTIONS": "--require ${m}"}, "steps[0].input.env.NODE_OPTIONS"},
		{map[string]any{"GIT_CONFIG_KEY_0": "${k}"}, "steps[0].input.env.GIT_CONFIG_KEY_0"},
		{map[string]any{"PATH": "/usr/bin"}, ""},
		{map[string]any{"Path": "${dir}"}, "steps[0].input.env.Path"},
	} {
		input := map[string]any{"command": "printf", "args": []any{"%s", "${x}"}, "env": c.env}
		err := checkCodePlaceholders("create", "machine.exec", input, "steps[0].input")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("env %v refused: %v", c.env, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("env %v: got %v, want an error naming %s", c.env, err, c.want)
		}
	}
}
