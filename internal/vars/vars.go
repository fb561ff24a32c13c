// Package vars holds the rules for workflow variables, the seeds' append_workflow_state: which
// names and values are accepted, and the shell rendering that later bash blocks `eval` to get
// them back.
//
// It is pure: it neither stores variables (internal/store does, in the workflow record's
// "vars") nor runs a shell. The name rule (see Words) keeps stored state from quietly changing
// how every later bash block or program behaves after eval "$(cairn vars export)"; it is not
// a sandbox, since the agent setting a variable can run commands anyway.
package vars

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/workflow"
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

// Words are the first words a variable name may start with: Cairn's own workflow namespace
// (WF_) and the workflow nouns the seeds' variables use (PLAN_PATH, RESEARCH_COMPLETE,
// REPORTS_CREATED, TOPIC_PATH, WORKFLOW_SCOPE, CURRENT_WAVE, SUPERVISOR_RESULT...).
//
// The rule is an allow-list of shapes, not a deny-list of names, because no deny-list of the
// names that change how another program runs is ever complete. Programs read three kinds of
// name: single words (PATH, PAGER, EDITOR, CC, GOFLAGS, MAKEFLAGS, LESSOPEN, RUSTFLAGS,
// PYTHONSTARTUP), lower-case names (npm_config_*, http_proxy) and names in their own
// namespace, the first word being the program or its family (LD_PRELOAD, GIT_SSH_COMMAND,
// PIP_INDEX_URL, NODE_OPTIONS, RUSTC_WRAPPER, SSH_ASKPASS, HTTPS_PROXY, BASH_ENV,
// GCONV_PATH). A name Cairn accepts is none of these: upper case, at least two words, and
// its first word a workflow noun that names no program.
var Words = []string{"WF", "PLAN", "RESEARCH", "REPORT", "REPORTS", "TOPIC", "WORKFLOW", "PHASE",
	"TASK", "WAVE", "SUPERVISOR", "CURRENT", "REVIEW", "SPEC"}

// rule says, for error messages, what a name must look like.
const rule = "a name is upper case words joined by _, starting with WF_ or a workflow word " +
	"(PLAN, RESEARCH, REPORT, REPORTS, TOPIC, WORKFLOW, PHASE, TASK, WAVE, SUPERVISOR, CURRENT, REVIEW, SPEC), " +
	"such as PLAN_PATH or WF_BRANCH, so that no other program reads it"

// ValidKey reports whether k may name a workflow variable (see Words): at most 64 bytes of
// [A-Z0-9_], words joined by single underscores, the first word one of Words and at least
// one more word after it. The refused name is never repeated in the error: it may be a
// secret pasted into the wrong place.
func ValidKey(k string) error {
	if k == "" {
		return fmt.Errorf("%w: the name is empty; %s", ErrInvalid, rule)
	}
	if len(k) > MaxKeyLen {
		return fmt.Errorf("%w: the name is %d bytes long, over the %d allowed", ErrInvalid, len(k), MaxKeyLen)
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c == '_' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			continue
		}
		what := fmt.Sprintf("%q", rune(c))
		if 'a' <= c && c <= 'z' {
			what = "a lower-case letter"
		} else if c >= 0x80 {
			what = "a non-ASCII character"
		}
		// Counted from one, as a person counts: every byte before i is ASCII, one character each.
		return fmt.Errorf("%w: the name has %s as character %d; %s", ErrInvalid, what, i+1, rule)
	}
	first, rest, ok := strings.Cut(k, "_")
	if !ok || rest == "" || !slices.Contains(Words, first) || strings.Contains(k, "__") || strings.HasSuffix(k, "_") {
		return fmt.Errorf("%w: the name is outside Cairn's variable names; %s", ErrInvalid, rule)
	}
	if f := secrets.ScanString(k); f != nil {
		return fmt.Errorf("%w: %s", ErrInvalid, f.Refusal("the name"))
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
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		if err := ValidKey(k); err != nil {
			return err
		}
		if err := ValidValue(vars[k]); err != nil {
			return fmt.Errorf("variable %s: %w", k, err) // k passed ValidKey
		}
	}
	return nil
}

// Export renders vars as `export KEY='value'` lines, sorted by name, that any POSIX shell can
// eval or source to get every value back byte for byte, whatever it holds: inside single
// quotes nothing is special, and a single quote is written as '\” (close, escaped quote,
// reopen). Newlines stay inside the quotes. A backslash is written outside them, as '\\'
// (close, escaped backslash, reopen), for fish (`cairn vars export | source`), which reads
// \\ and \' as escapes inside single quotes. A variable whose name or value is invalid is
// left out and counted in a trailing comment, so that a tampered record can never inject a
// command.
func Export(vars map[string]string) string {
	var b strings.Builder
	skipped := 0
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		v := vars[k]
		if ValidKey(k) != nil || ValidValue(v) != nil {
			skipped++
			continue
		}
		b.WriteString("export " + k + "=" + quoteForFish(v) + "\n")
	}
	if skipped > 0 {
		fmt.Fprintf(&b, "# cairn: left out %d variable%s whose name or value is not allowed\n", skipped, workflow.Plural(skipped))
	}
	return b.String()
}

// quoteForFish is Quote with each backslash written outside the quotes, as '\\', which POSIX
// shells and fish read alike.
func quoteForFish(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return Quote(s)
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'':
			b.WriteString(`'\''`)
		case '\\':
			b.WriteString(`'\\'`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// Quote returns s single-quoted for a POSIX shell.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
