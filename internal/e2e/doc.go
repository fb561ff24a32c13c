// Package e2e holds the end-to-end suite that runs the real Claude Code CLI (npm
// @anthropic-ai/claude-code, pinned by .ci/install-claude.sh) against the mock Anthropic API in
// mockapi, with an isolated HOME and a temporary git project, and checks the stream-json
// output, the requests the mock recorded, and the files on disk.
//
// Run it with `make e2e`, or `go test ./internal/e2e/...`: the harness runs
// .ci/install-claude.sh itself (a cached, idempotent npm install) unless CAIRN_CLAUDE_BIN names
// a Claude Code executable. It skips only when Node.js or npm is missing.
//
// It has no non-test code: the harness lives in harness_test.go (claudeBin, buildPlugin,
// newWorld, World.run, Run's event accessors). cairn_test.go holds issue 6's scenarios, run on
// cairnPlugin (the repository's manifests and the binaries `make build` makes): the plugin
// loads; tool calls land on disk; startup, --resume, fork, /clear and /compact all get the
// resume report and the MCP server follows /clear; the position line reaches the auto-memory
// Claude Code loads; an expired workflow is archived; the Stop hook asks once. versions_test.go
// holds state Cairn did not write or cannot hand over whole: a newer Cairn's record, a seed's
// state file, a checkpoint over one tool result. toyplugin and testdata/toyplugin hold a
// throwaway plugin (one hook binary, one mcp-go server) for the client facts Cairn's design
// rests on and for the harness's own checks (toy_test.go).
// It is not a unit test of Cairn: each run costs one to ten seconds of real client time, so it
// checks what only the real client can show.
package e2e
