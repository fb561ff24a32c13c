package hook

import "time"

// SessionStartOutput is the SessionStart output without a session title.
func SessionStartOutput(additionalContext, systemMessage string) []byte {
	return sessionTitleOutput(additionalContext, systemMessage, "")
}

// SetHardStop makes r's hard stop the channel stop returns, given the moment its timer would
// have fired.
func SetHardStop(r *Runner, stop func(at time.Time) <-chan time.Time) { r.hardStop = stop }
