package hook

import (
	"io"
	"time"
)

// SessionStartOutput is the SessionStart output without a session title.
func SessionStartOutput(additionalContext, systemMessage string) []byte {
	return sessionTitleOutput(additionalContext, systemMessage, "")
}

// SetHardStop makes r's hard stop the channel stop returns, given the moment its timer would
// have fired.
func SetHardStop(r *Runner, stop func(at time.Time) <-chan time.Time) { r.hardStop = stop }

// ReadInputUntil is ReadInput(r, limit, wait) with the wait over when timeout is ready.
func ReadInputUntil(r io.Reader, limit int64, timeout <-chan time.Time) ([]byte, error) {
	return whole(readInput(r, limit, timeout))
}

// ReadEventUntil is ReadEvent(r, wait) with the wait over when timeout is ready.
func ReadEventUntil(r io.Reader, wait time.Duration, timeout <-chan time.Time) (Event, []string) {
	data, err := readInput(r, MaxInput, timeout)
	return eventOf(data, err, wait)
}
