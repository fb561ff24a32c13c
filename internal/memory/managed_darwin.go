package memory

// defaultManagedSettings is Claude Code's managed (policy) settings file on macOS.
const defaultManagedSettings = "/Library/Application Support/ClaudeCode/managed-settings.json"
