// Package plugintest holds tests only: the repository's invariants as a Claude Code plugin
// (plugin.json, marketplace.json, .mcp.json, hooks/hooks.json, every SKILL.md and slash
// command), the hooks/launch build-once launcher, the rule that hook binaries do not link
// mcp-go, and the whole-process benchmarks of the hooks against a no-op binary and the seeds'
// bash+jq baseline.
//
// It has no exported API and nothing imports it.
package plugintest
