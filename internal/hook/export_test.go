package hook

// SessionStartOutput is the SessionStart output without a session title.
func SessionStartOutput(additionalContext, systemMessage string) []byte {
	return sessionTitleOutput(additionalContext, systemMessage, "")
}
