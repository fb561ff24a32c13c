// Package vars holds the rules for workflow variables, the seeds' append_workflow_state: which
// names and values are accepted, and the shell rendering that later bash blocks `eval` to get
// them back.
//
// It is pure: it neither stores variables (internal/store does, in the workflow record's
// "vars") nor runs a shell. The deny-list guards against accidents and against stored state
// quietly changing how every later bash block behaves; it is not a sandbox, since the agent
// setting a variable can run commands anyway.
package vars

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Limits. A value is bounded so that a rendering stays far below a shell's argument and the
// store's 1 MiB document limit; the count bounds the rendering as a whole.
const (
	MaxKeyLen   = 64
	MaxValueLen = 64 << 10 // bytes
	MaxVars     = 256
)

// ErrInvalid is wrapped by every error this package returns, for callers that branch on it.
var ErrInvalid = errors.New("invalid workflow variable")

// denied are names a POSIX shell, bash or zsh give meaning to, where a stored value would
// change how every later command is found or parsed (PATH, IFS, CDPATH, ENV...), alter the
// prompt or history machinery, or fail outright as read-only (UID, EUID, PPID). Compared
// without case: zsh ties lowercase path, cdpath, fpath and manpath to their uppercase twins.
// The interpreter option variables load code into every later node, perl, ruby, java or
// python run.
var denied = []string{
	"_", "BASH", "CDPATH", "ENV", "EUID", "FPATH", "GLOBIGNORE", "HISTFILE", "HOME", "IFS",
	"LANG", "LANGUAGE", "LINENO", "MAILPATH", "MANPATH", "OLDPWD", "OPTARG", "OPTIND", "PATH",
	"POSIXLY_CORRECT", "PPID", "PROMPT_COMMAND", "PS1", "PS2", "PS3", "PS4", "PSVAR", "PWD",
	"RANDOM", "SECONDS", "SHELL", "SHELLOPTS", "BASHOPTS", "SHLVL", "TMPDIR", "UID", "ZDOTDIR",
	"NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "JAVA_TOOL_OPTIONS", "PYTHONPATH", "PYTHONSTARTUP",
}

// deniedPrefixes are families where one name can load code into every program started
// afterwards (LD_PRELOAD, DYLD_INSERT_LIBRARIES, BASH_ENV), run commands or move the
// repository under git, which workflows end by calling (GIT_SSH_COMMAND, GIT_DIR), change the
// locale every tool parses with (LC_*), or redirect Claude Code and Cairn themselves
// (CLAUDE_*, CAIRN_*: CAIRN_STATE_DIR would move where later commands read and write state).
var deniedPrefixes = []string{"LD_", "DYLD_", "BASH_", "GIT_", "LC_", "CLAUDE_", "CAIRN_"}

// ValidKey reports whether k may name a workflow variable: [A-Za-z_][A-Za-z0-9_]{0,63}, and
// not a name the shell or the environment gives meaning to (see the deny-list).
func ValidKey(k string) error {
	if k == "" {
		return fmt.Errorf("%w: the name is empty; use letters, digits and _, such as PLAN_PATH", ErrInvalid)
	}
	if len(k) > MaxKeyLen {
		return fmt.Errorf("%w: the name is %d bytes long, over the %d allowed", ErrInvalid, len(k), MaxKeyLen)
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || i > 0 && '0' <= c && c <= '9' {
			continue
		}
		return fmt.Errorf("%w: the name %q has %q at byte %d; use letters, digits and _, not starting with a digit",
			ErrInvalid, k, rune(c), i)
	}
	if slices.ContainsFunc(denied, func(d string) bool { return strings.EqualFold(d, k) }) {
		return fmt.Errorf("%w: %s is a shell or environment variable that later commands depend on;"+
			" choose a workflow-specific name such as WF_%s", ErrInvalid, k, strings.ToUpper(k))
	}
	for _, p := range deniedPrefixes {
		if strings.HasPrefix(k, p) {
			return fmt.Errorf("%w: names starting %s are reserved (they change how later programs load,"+
				" parse or find their state); choose a workflow-specific name such as WF_%s", ErrInvalid, p, k)
		}
	}
	return nil
}

// ValidValue reports whether v may be stored: valid UTF-8 (the record is JSON), no NUL (a
// shell string cannot hold one), at most MaxValueLen bytes. Secrets are the caller's check
// (internal/secrets), since it knows the path to report.
func ValidValue(v string) error {
	switch {
	case len(v) > MaxValueLen:
		return fmt.Errorf("%w: the value is %d bytes, over the %d allowed; store a path to a file holding it instead",
			ErrInvalid, len(v), MaxValueLen)
	case strings.IndexByte(v, 0) >= 0:
		return fmt.Errorf("%w: the value holds a NUL byte, which a shell variable cannot carry", ErrInvalid)
	case !utf8.ValidString(v):
		return fmt.Errorf("%w: the value is not valid UTF-8", ErrInvalid)
	}
	return nil
}

// Check validates a whole set: at most MaxVars variables, each name and value valid. The
// error names the first offending variable in sorted order.
func Check(vars map[string]string) error {
	if len(vars) > MaxVars {
		return fmt.Errorf("%w: %d variables, over the %d allowed; keep larger data in a checkpoint",
			ErrInvalid, len(vars), MaxVars)
	}
	for _, k := range sortedKeys(vars) {
		if err := ValidKey(k); err != nil {
			return err
		}
		if err := ValidValue(vars[k]); err != nil {
			return fmt.Errorf("variable %s: %w", k, err)
		}
	}
	return nil
}

// Export renders vars as `export KEY='value'` lines, sorted by name, that any POSIX shell can
// eval or source to get every value back byte for byte, whatever it holds: inside single
// quotes nothing is special, and a single quote is written as '\” (close, escaped quote,
// reopen). Newlines stay inside the quotes. A variable whose name or value is invalid is left
// out and counted in a trailing comment, so that a tampered record can never inject a command.
func Export(vars map[string]string) string {
	var b strings.Builder
	skipped := 0
	for _, k := range sortedKeys(vars) {
		v := vars[k]
		if ValidKey(k) != nil || ValidValue(v) != nil {
			skipped++
			continue
		}
		b.WriteString("export ")
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(Quote(v))
		b.WriteByte('\n')
	}
	if skipped > 0 {
		fmt.Fprintf(&b, "# cairn: left out %d variable(s) whose name or value is not allowed\n", skipped)
	}
	return b.String()
}

// Quote returns s single-quoted for a POSIX shell.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
