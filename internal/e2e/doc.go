// Package e2e holds the end-to-end suite that runs the real Claude Code CLI (npm
// @anthropic-ai/claude-code, pinned by .ci/install-claude.sh) against the mock Anthropic API in
// mockapi, with an isolated HOME and a temporary git project, and checks the stream-json
// output, the requests the mock recorded, and the files on disk.
//
// It has no non-test code: the harness lives in harness_test.go, the scenarios in the other
// _test.go files. toyplugin holds a throwaway plugin (a hook and an MCP server) that proves the
// harness itself. The suite skips only when Node.js is missing.
package e2e
