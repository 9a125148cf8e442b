package startup

import (
	"strings"
)

// Command lines as the programs that start them split them: a desktop
// entry's Exec= (the Desktop Entry Specification's quoting), a shell's
// or a systemd unit's words, and a Windows command line
// (CommandLineToArgvW's rules).

// desktopExec splits a desktop entry's Exec= value (its string escapes
// already undone) into arguments: double quotes group, and inside them a
// backslash escapes ", `, $ and \. Field codes (%f, %U, …) are dropped
// and %% is a percent sign.
func desktopExec(s string) []string {
	var args []string
	var cur strings.Builder
	in, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case in && c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		case c == '"':
			in = !in
			quoted = true
		case !in && (c == ' ' || c == '\t'):
			if cur.Len() > 0 || quoted {
				args = append(args, cur.String())
			}
			cur.Reset()
			quoted = false
		default:
			cur.WriteByte(c)
		}
	}
	if cur.Len() > 0 || quoted {
		args = append(args, cur.String())
	}
	out := args[:0]
	for _, a := range args {
		if len(a) == 2 && a[0] == '%' && strings.IndexByte("fFuUdDnNickvm", a[1]) >= 0 {
			continue
		}
		out = append(out, strings.ReplaceAll(a, "%%", "%"))
	}
	return out
}

// desktopString undoes a desktop entry value's string escapes (\s, \n,
// \t, \r, \\).
func desktopString(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 's':
			b.WriteByte(' ')
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '\\':
			b.WriteByte('\\')
		default:
			// Not a string escape: kept for the Exec quoting to read.
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// shellCommands splits a line of a shell script into its simple
// commands' words: quotes (single, double) and backslashes as a POSIX
// shell reads them, an unquoted ; & | ( ) or newline ends a command, an
// unquoted # at a word's start ends the line. Nothing is expanded.
func shellCommands(s string) [][]string {
	var cmds [][]string
	var words []string
	var cur strings.Builder
	word := false
	end := func() {
		if word {
			words = append(words, cur.String())
		}
		cur.Reset()
		word = false
	}
	endCmd := func() {
		end()
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
		words = nil
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			word = true
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			word = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			word = true
		case c == '#' && !word:
			endCmd()
			return cmds
		case c == ' ' || c == '\t':
			end()
		case strings.IndexByte(";&|()\n", c) >= 0:
			endCmd()
		default:
			cur.WriteByte(c)
			word = true
		}
	}
	endCmd()
	return cmds
}

// shellWords is the words of a command line read as shellCommands reads
// it, all commands' words in order.
func shellWords(s string) []string {
	var out []string
	for _, c := range shellCommands(s) {
		out = append(out, c...)
	}
	return out
}

// windowsArgs splits a Windows command line as CommandLineToArgvW does:
// the program is everything up to the first space, or between the
// first pair of quotes; in the arguments, 2n backslashes before a quote
// are n backslashes and the quote toggles quoting, 2n+1 are n and a
// literal quote.
func windowsArgs(s string) []string {
	s = strings.TrimLeft(s, " \t")
	if s == "" {
		return nil
	}
	var args []string
	if s[0] == '"' {
		end := strings.IndexByte(s[1:], '"')
		if end < 0 {
			return []string{s[1:]}
		}
		args = append(args, s[1:1+end])
		s = s[2+end:]
	} else {
		end := strings.IndexAny(s, " \t")
		if end < 0 {
			return []string{s}
		}
		args = append(args, s[:end])
		s = s[end:]
	}
	var cur strings.Builder
	in, word := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			n := 0
			for i < len(s) && s[i] == '\\' {
				n++
				i++
			}
			if i < len(s) && s[i] == '"' {
				cur.WriteString(strings.Repeat(`\`, n/2))
				if n%2 == 1 {
					cur.WriteByte('"')
				} else {
					in = !in
				}
			} else {
				cur.WriteString(strings.Repeat(`\`, n))
				i--
			}
			word = true
		case c == '"':
			if in && i+1 < len(s) && s[i+1] == '"' {
				cur.WriteByte('"')
				i++
			} else {
				in = !in
			}
			word = true
		case !in && (c == ' ' || c == '\t'):
			if word {
				args = append(args, cur.String())
			}
			cur.Reset()
			word = false
		default:
			cur.WriteByte(c)
			word = true
		}
	}
	if word {
		args = append(args, cur.String())
	}
	return args
}

// psCommands splits a line of PowerShell into its commands' words:
// quotes group, a backtick escapes the next character, an unquoted ;
// or | ends a command and an unquoted # at a word's start the line.
// A backslash is a path's separator, not an escape.
func psCommands(s string) [][]string {
	var cmds [][]string
	var words []string
	var cur strings.Builder
	word := false
	var quote byte
	end := func() {
		if word {
			words = append(words, cur.String())
		}
		cur.Reset()
		word = false
	}
	endCmd := func() {
		end()
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
		words = nil
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '`' && i+1 < len(s) && quote != '\'':
			i++
			cur.WriteByte(s[i])
			word = true
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote = c
			word = true
		case c == '#' && !word:
			endCmd()
			return cmds
		case c == ' ' || c == '\t':
			end()
		case c == ';' || c == '|':
			endCmd()
		default:
			cur.WriteByte(c)
			word = true
		}
	}
	endCmd()
	return cmds
}
