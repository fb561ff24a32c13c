package hook

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// Time bounds every hook keeps. hooks/hooks.json gives each hook 10 s; a hook that is still
// working at Deadline prints what it has and exits 0, well before Claude Code would kill it
// and show the user a failure.
const (
	StdinWait = 2 * time.Second // for Claude Code to write the event and close stdin
	Deadline  = 5 * time.Second // for the whole hook, stdin included
)

// maxHard is the latest a hook gives up on its work, counted from its start: hooks.json gives
// each hook 10 s, counted by Claude Code from before the process began, and what is left is
// for printing the answer and exiting.
const maxHard = 9500 * time.Millisecond

// EnvDeadline overrides Deadline (a Go duration such as "3s", from 50ms to 9s): a slow disk
// may need more, a test less.
const EnvDeadline = "CAIRN_HOOK_DEADLINE"

// DeadlineFrom returns the deadline getenv asks for, or Deadline when it asks for none or for
// something unusable (with a note saying so).
func DeadlineFrom(getenv func(string) string) (time.Duration, string) {
	v := getenv(EnvDeadline)
	if v == "" {
		return Deadline, ""
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 50*time.Millisecond || d > 9*time.Second {
		return Deadline, fmt.Sprintf("%s is not a duration from 50ms to 9s; using %s", EnvDeadline, Deadline)
	}
	return d, ""
}

// Runner is the frame both hook mains share: stderr lines prefixed with the hook's name, and
// a body run under a hard deadline that turns a hang or a panic into a printed fallback and a
// clean exit.
type Runner struct {
	Name     string        // the binary, e.g. "cairn-session-start": the prefix of stderr lines
	Stderr   io.Writer     // diagnostics; stdout is protocol only
	Deadline time.Duration // counted from run's start; runHook sets it from DeadlineFrom

	mu sync.Mutex
	// eventName is the event's hook_event_name once read from stdin, for the answer of a hook
	// that stops early (earlyOutput); apart from mu, which a stderr write holds.
	eventName atomic.Pointer[string]
	// hardStop, when set, stands in for the timer of run's hard stop: it gets the moment the
	// timer would fire and returns the channel run gives up on. Tests decide with it which of
	// the body and the hard stop comes first, which a loaded machine's scheduler otherwise does.
	hardStop func(at time.Time) <-chan time.Time
	// signalsArmed, when set, is called once run stops on signals (signalsAfter).
	signalsArmed func()
	// held counts the work a stop waits for (hold): an event no one sends again, until it is
	// recorded or kept. heldDone is closed when it drops to 0. Both under heldMu, not mu: a
	// stderr write that blocks must not block them.
	heldMu   sync.Mutex
	held     int
	heldDone chan struct{}
	// stopSays, when set, is what a stop says of the work in hand once it has waited for it
	// (waitHeld): whether the event no one sends again was kept, or lost.
	stopSays atomic.Pointer[string]
}

// heldWait bounds how long a signal or the hard stop waits for held work (hold): a write or
// two, with the hard stop's answer still well inside hooks.json's 10 s.
const heldWait = 200 * time.Millisecond

// hold marks work that a signal or the hard stop lets finish, for heldWait at most, before the
// hook answers and exits: the event in hand until it is recorded or kept, which the process's
// end would lose. release (safe to call again) ends it.
func (r *Runner) hold() (release func()) {
	r.heldMu.Lock()
	defer r.heldMu.Unlock()
	if r.held == 0 {
		r.heldDone = make(chan struct{})
	}
	r.held++
	return sync.OnceFunc(func() {
		r.heldMu.Lock()
		defer r.heldMu.Unlock()
		if r.held--; r.held == 0 {
			close(r.heldDone)
		}
	})
}

// waitHeld waits for held work (hold), for heldWait at most, then says what stopSays holds.
func (r *Runner) waitHeld() {
	r.heldMu.Lock()
	done := r.heldDone
	if r.held == 0 {
		done = nil
	}
	r.heldMu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-time.After(heldWait):
		}
	}
	if s := r.stopSays.Load(); s != nil {
		r.Logf("%s", *s)
	}
}

// signalsAfter is how long a hook works before a signal stops it with a line said (run):
// a hook with nothing to do is done well before, and pays nothing for it.
const signalsAfter = 20 * time.Millisecond

// Logf writes one line to stderr, prefixed with the hook's name. Safe for concurrent use.
func (r *Runner) Logf(format string, args ...any) {
	r.raw(fmt.Appendf(nil, "%s: %s\n", r.Name, OneLine(fmt.Sprintf(format, args...), 2000)))
}

func (r *Runner) raw(b []byte) {
	if r.Stderr == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Stderr.Write(b)
}

// run calls body with a context that ends at the deadline and returns what body returns. When
// body panics, or has not returned by the deadline, run logs why and returns fallback(why)
// instead; a body still running is abandoned (the process is about to exit). The deadline
// counts from start, so time already spent reading stdin is included. It still stops on
// signals until disarm is called: a signal while the answer is written is ignored.
func (r *Runner) run(start time.Time, body func(ctx context.Context) []byte, fallback func(why string) []byte) (out []byte, disarm func()) {
	end := start.Add(r.Deadline)
	ctx, cancel := context.WithDeadline(context.Background(), end)
	defer cancel()

	// Claude Code interrupted (Esc, Ctrl-C) or exiting mid-hook ends it by a signal: without
	// this the hook died with 143 and no word. It stops as at the hard stop instead: one line
	// said, exit 0; its writes are atomic and its locks die with the process. Notify starts a
	// thread for its watcher, a tenth of a hook that has nothing to do, so it is armed only
	// once the hook has worked signalsAfter. disarm undoes it: the signals are a caller's that
	// runs on (a test) again.
	sig := make(chan os.Signal, 1)
	var armMu sync.Mutex
	disarmed := false
	arm := time.AfterFunc(signalsAfter, func() {
		armMu.Lock()
		defer armMu.Unlock()
		if disarmed {
			return
		}
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
		if r.signalsArmed != nil {
			r.signalsArmed()
		}
	})
	disarm = func() {
		armMu.Lock()
		defer armMu.Unlock()
		disarmed = true
		arm.Stop()
		signal.Stop(sig)
	}
	type result struct {
		out      []byte
		panicked string
	}
	done := make(chan result, 1)
	go func() {
		reserveStack(0)
		defer func() {
			if p := recover(); p != nil {
				r.Logf("internal error: %v", p)
				r.raw(debug.Stack())
				done <- result{panicked: fmt.Sprintf("internal error (%v)", p)}
			}
		}()
		done <- result{out: body(ctx)}
	}()

	// A little grace after the context ends lets a body that honours ctx return its own,
	// better-worded answer before the hard stop, which never comes later than maxHard.
	at := start.Add(min(r.Deadline+r.Deadline/10, maxHard))
	var hard <-chan time.Time
	if r.hardStop != nil {
		hard = r.hardStop(at)
	} else {
		t := time.NewTimer(time.Until(at))
		defer t.Stop()
		hard = t.C
	}
	select {
	case s := <-sig:
		why := "interrupted by " + signalName(s)
		r.Logf("%s; printing what it has and exiting", why)
		r.waitHeld()
		return fallback(why), disarm
	case res := <-done:
		if res.panicked != "" {
			return fallback(res.panicked), disarm
		}
		return res.out, disarm
	case <-hard:
		why := fmt.Sprintf("did not finish within %s", r.Deadline)
		r.Logf("%s; printing what it has and exiting", why)
		r.waitHeld()
		return fallback(why), disarm
	}
}

// signalName is how a person names the signals run stops on.
func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return "SIGTERM"
}

// runHook is a hook binary's whole life with its I/O passed in: it reads the deadline from the
// environment, runs work under it (see run) and writes the answer to stdout. It has no exit
// code to give: a hook that exits other than 0 shows the user a failure and helps no one, so
// every failure is printed as an answer instead. early is the one-line systemMessage printed
// when work panics or overruns the deadline, its %s the reason (for a PreCompact event, the
// text of earlyOutput).
func runHook(name string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string, yaml engine.YAML,
	work func(ctx context.Context, r *Runner, stdin io.Reader, getenv func(string) string, yaml engine.YAML) []byte, early string) {
	runHookAs(&Runner{Name: name, Stderr: stderr}, stdin, stdout, getenv, yaml, work, early)
}

// runHookAs is runHook with r, its Name and Stderr set, as the runner.
func runHookAs(r *Runner, stdin io.Reader, stdout io.Writer, getenv func(string) string, yaml engine.YAML,
	work func(ctx context.Context, r *Runner, stdin io.Reader, getenv func(string) string, yaml engine.YAML) []byte, early string) {
	start := time.Now()
	name := r.Name
	var out []byte
	root, stale := staleLaunch(getenv)
	var backErr error
	if stale {
		// Binaries made from other sources: the launcher finds or installs the right ones. It
		// replaces this process before SIGPIPE is ignored: its shell would inherit that.
		backErr = handBack(name, root)
	}
	// A reader gone (Claude Code's end of a pipe closed) must not kill the hook by SIGPIPE,
	// an exit Claude Code shows as a failed hook: a write to it fails with EPIPE instead, said
	// on stderr as any failed write is.
	signal.Ignore(syscall.SIGPIPE)
	if stale {
		r.Logf("these binaries were not made from the plugin's sources (%s), and running hooks/launch again failed: %v", getenv(EnvLaunchBin), backErr)
		// A checkout builds its own; any other install is the launcher's to refresh, which a
		// new session runs (where this plugin's directory was half removed by an update, the
		// new session runs the updated plugin's).
		step := "start a new session: its launcher installs this plugin's binaries"
		if build := engine.BuildCommand(root); build != "" {
			step = "run " + build
		}
		out = launchOutput(name, "Cairn: this plugin's binaries are out of date and the launcher could not be run to replace them; "+step+".")
	} else {
		var note string
		if r.Deadline, note = DeadlineFrom(getenv); note != "" {
			r.Logf("%s", note)
		}
		var disarm func()
		out, disarm = r.run(start, func(ctx context.Context) []byte {
			return work(ctx, r, stdin, getenv, yaml)
		}, func(why string) []byte { return r.earlyOutput(early, why) })
		defer disarm() // after the answer is written
		// Not from cairn-event: its answer to PreCompact is text for the compaction request.
		if name != EventsName {
			out = withUpdateNotice(getenv, out)
		}
	}
	if len(out) == 0 {
		return // nothing to say: no write at all
	}
	if _, err := stdout.Write(out); err != nil {
		r.Logf("writing stdout: %v", err)
	}
}

// launchOutput is a hook's answer msg, a line for the user, said before its event is read (the
// launcher's check): a systemMessage, but from cairn-event a line of text. That binary serves
// PreCompact too, whose stdout Claude Code adds as it is to the compaction request (a JSON
// object there is noise the summary carries), and which event came is on stdin, not read. Its
// other events lose no more than a line the next Stop or session start says too.
// hooks/install's cairn_say does the same.
func launchOutput(name, msg string) []byte {
	if name == EventsName {
		return []byte(OneLine(msg, 2000) + "\n")
	}
	return MessageOutput(msg)
}

// compactEarly is a PreCompact hook's answer when it stops early, its %s the reason: text,
// for Claude Code adds that hook's stdout as it is to the compaction request and shows it to
// the user as the hook's output, and reads no systemMessage there. It does not point to
// stderr: the model that reads the request never sees it.
const compactEarly = "Cairn: the workflow position was not read before this compaction (%s). After compaction, call " +
	engine.ToolPrefix + "resume_check to see where the work stands.\n"

// earlyOutput is the answer of a hook that stops early (run's fallback): the one-line
// systemMessage early says, its %s why; for PreCompact, compactEarly.
func (r *Runner) earlyOutput(early, why string) []byte {
	if name := r.eventName.Load(); name != nil && *name == EventPreCompact {
		return fmt.Appendf(nil, compactEarly, why)
	}
	return MessageOutput(fmt.Sprintf(early, why))
}

// lockWait is how long the engine may wait for a lock: most of the time left before ctx's
// deadline, keeping some to print the answer.
func lockWait(ctx context.Context) time.Duration {
	d, ok := ctx.Deadline()
	if !ok {
		return 3 * time.Second
	}
	return max(time.Until(d)*3/4, 10*time.Millisecond)
}

// reserveStack grows the calling goroutine's stack to what a hook's body needs (decoding the
// workflow record nests deeply), while only one frame is on it. A goroutine starts with 8 KiB
// and doubles on demand, and each growth copies the stack and adjusts every frame through the
// pc tables: four growths deep inside encoding/json cost each hook about 65,000 instructions;
// this one, with one frame to adjust, costs about 1,000.
//
//go:noinline
func reserveStack(i int) byte {
	var pad [32 << 10]byte
	pad[i] = byte(i)
	return pad[i/2]
}
