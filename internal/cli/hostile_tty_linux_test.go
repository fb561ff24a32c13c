package cli_test

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/cairn-dev/cairn/internal/cli"
	"github.com/cairn-dev/cairn/internal/textsafe"
)

// openPTY opens a pseudo-terminal: the controlling side, to read what was written, and the
// terminal itself, to give cairn as its stdout.
func openPTY(t *testing.T) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlocking the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetUint32(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("naming the pseudo-terminal: %v", err)
	}
	tty, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("opening the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return ptmx, tty
}

// TestTerminalGetsNoRawControls: vars get and vars export print a value as stored, for
// $(...) and eval; but on a terminal a person reads them, and a stored escape sequence would
// act on the terminal. There each such character shows as ?, with a note on stderr; piped,
// the value stays byte for byte.
func TestTerminalGetsNoRawControls(t *testing.T) {
	t.Parallel()
	nasty := "a\x1b]0;pwned\x07b\x1b[2Jc \u202eevil\u202c \u009b31m \x7fdel"
	p := newCLIProject(t)
	mustRun(t, p, "", "start", "apex", "tty")
	mustRun(t, p, "", "vars", "set", "PLAN_NOTE", nasty)
	for _, args := range [][]string{{"vars", "get", "PLAN_NOTE"}, {"vars", "export"}} {
		ptmx, tty := openPTY(t)
		var stderr bytes.Buffer
		code := cli.Main(args, strings.NewReader(""), tty, &stderr, p.getenv)
		tty.Close()
		out, _ := io.ReadAll(ptmx) // ends with EIO once the terminal side is closed
		if code != 0 {
			t.Fatalf("cairn %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
		}
		for i, r := range string(out) {
			if r != '\n' && r != '\r' && (r == utf8.RuneError || unicode.IsControl(r) || textsafe.Dropped(r)) {
				t.Errorf("cairn %s put U+%04X raw on the terminal at byte %d: %q", strings.Join(args, " "), r, i, out)
				break
			}
		}
		if !strings.Contains(string(out), "a?]0;pwned?b?[2Jc") {
			t.Errorf("cairn %s on a terminal printed %q, want the value with ? for each control", strings.Join(args, " "), out)
		}
		if !strings.Contains(stderr.String(), "shown as ?") {
			t.Errorf("cairn %s: no note on stderr: %q", strings.Join(args, " "), stderr.String())
		}
	}
	// Captured, the value is as stored.
	if _, out := p.run("", "vars", "get", "PLAN_NOTE"); out != nasty+"\n" {
		t.Errorf("vars get piped printed %q, want %q", out, nasty+"\n")
	}
}

// TestCharDeviceIsNoTerminal: /dev/null is a character device but no terminal. Redirected
// there (a script's </dev/null >/dev/null), cairn asks nothing and says nothing of a terminal:
// uninstall gives its --yes step without a question, and vars get prints the value as stored.
func TestCharDeviceIsNoTerminal(t *testing.T) {
	t.Parallel()
	p := newCLIProject(t)
	mustRun(t, p, "", "start", "apex", "tty")
	mustRun(t, p, "", "transition", "plan") // a line in memory: uninstall has something to remove
	mustRun(t, p, "", "vars", "set", "PLAN_NOTE", "a\x1b[2Jb")
	for _, tc := range []struct {
		args    []string
		notSaid string
	}{
		{[]string{"vars", "get", "PLAN_NOTE"}, "on this terminal"},
		{[]string{"uninstall"}, "Remove all of this?"},
	} {
		null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		code := cli.Main(tc.args, null, null, &stderr, p.getenv)
		null.Close()
		if code != 0 || strings.Contains(stderr.String(), tc.notSaid) {
			t.Errorf("cairn %s </dev/null >/dev/null: exit %d, stderr %q; want exit 0 and nothing said of %q", strings.Join(tc.args, " "), code, stderr.String(), tc.notSaid)
		}
	}
}
