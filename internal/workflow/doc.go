// Package workflow is Cairn's pure domain core: the schema-2.0 workflow record, workflow
// definitions (Markdown with YAML front matter), validated transitions, tasks, the initiative
// and its sync protocol, enforcement, TTL, integrity checks, recovery, session ownership and
// the resume plan.
//
// It is not a store: it reads no files, takes no locks, reads no clock and writes nothing.
// Time comes in as a time.Time, file existence through a func(path string) bool, and definition
// bytes are handed in by the caller. Every operation takes the current record and returns a new
// one (the input is never modified) together with what happened, so that internal/engine can
// journal, persist and write L2 lines around it. It does not format the resume report either:
// that is internal/report, built from the Plan this package returns.
package workflow
