package memory

// defaultManagedSettings is Claude Code's managed (policy) settings file on Windows.
const defaultManagedSettings = `C:\Program Files\ClaudeCode\managed-settings.json`
