package hook

import (
	"context"
	"io"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// SessionStartOutput is the SessionStart output without a session title.
func SessionStartOutput(additionalContext, systemMessage string) []byte {
	return sessionTitleOutput(additionalContext, systemMessage, "")
}

// Run is run with its signals disarmed once it returns.
func (r *Runner) Run(start time.Time, body func(ctx context.Context) []byte, fallback func(why string) []byte) []byte {
	out, disarm := r.run(start, body, fallback)
	disarm()
	return out
}

// SetHardStop makes r's hard stop the channel stop returns, given the moment its timer would
// have fired.
func SetHardStop(r *Runner, stop func(at time.Time) <-chan time.Time) { r.hardStop = stop }

// SetSignalsArmed calls armed once r's Run stops on signals.
func SetSignalsArmed(r *Runner, armed func()) { r.signalsArmed = armed }

// ReadInput reads r to EOF, at most limit bytes and for at most wait (none when wait <= 0): what
// it read and nil, or nil and ErrInputTooLarge, or what it read so far and ErrInputTimeout.
func ReadInput(r io.Reader, limit int64, wait time.Duration) ([]byte, error) {
	return readWhole(readInput(r, limit, nil, after(wait)))
}

// ReadInputUntil is ReadInput(r, limit, wait) with the wait over when timeout is ready.
func ReadInputUntil(r io.Reader, limit int64, timeout <-chan time.Time) ([]byte, error) {
	return readWhole(readInput(r, limit, nil, timeout))
}

// ReadEventUntil is ReadEvent(r, wait) with the wait over when timeout is ready.
func ReadEventUntil(r io.Reader, wait time.Duration, timeout <-chan time.Time) (Event, []string) {
	data, err := readInput(r, MaxInput, nil, timeout)
	return eventOf(data, err, wait)
}

// EventsAs is Events run by r, whose Name and Stderr it leaves as they are; done is closed
// when the hook's work has returned, which a hard stop lets happen after EventsAs has.
func EventsAs(r *Runner, stdin io.Reader, stdout io.Writer, getenv func(string) string) (done <-chan struct{}) {
	return workAs(r, stdin, stdout, getenv, events, eventsEarly)
}

// SessionStartAs is EventsAs for SessionStart.
func SessionStartAs(r *Runner, stdin io.Reader, stdout io.Writer, getenv func(string) string) (done <-chan struct{}) {
	return workAs(r, stdin, stdout, getenv, sessionStart, sessionStartEarly)
}

// StopAs is EventsAs for Stop.
func StopAs(r *Runner, stdin io.Reader, stdout io.Writer, getenv func(string) string) (done <-chan struct{}) {
	return workAs(r, stdin, stdout, getenv, stop, stopEarly)
}

// workAs is runHookAs with done closed when work has returned.
func workAs(r *Runner, stdin io.Reader, stdout io.Writer, getenv func(string) string,
	work func(ctx context.Context, r *Runner, stdin io.Reader, getenv func(string) string, yaml engine.YAML) []byte, early string) (done <-chan struct{}) {
	c := make(chan struct{})
	runHookAs(r, stdin, stdout, getenv, nil, func(ctx context.Context, r *Runner, stdin io.Reader, getenv func(string) string, yaml engine.YAML) []byte {
		defer close(c)
		return work(ctx, r, stdin, getenv, yaml)
	}, early)
	return c
}
