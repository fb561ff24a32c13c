// Package migrate recognises the workflow-state formats that came before Cairn's schema 2.0
// (Cairn's own schema 1.x records and the four seed formats: seed 001's
// .claude/workflow-state.json, seed 002's memory/state/phase.json with its execution.json, seed
// 003's checkpoint schema "2.0" and seed 004's .workflow-state/<name>-state.json) and converts
// them into the schema-2.0 workflow record, internal/workflow's Record (the one description of
// a record: migration has no schema of its own and holds its output to Record.Validate).
//
// It is pure: bytes in, a record out, the clock passed in. It does not find, read, write, lock
// or back up files, and it does not decide whether a record is sound for its workflow
// definition (workflow.Check does). internal/store calls Detect and Convert (or Migrate, which
// joins them with BackupName), encodes and stores the record, and keeps the original under the
// name BackupName gives.
//
// Nothing is lost: a field that has no place in the record, or whose value cannot be used (a
// wrong type, an unreadable time), is kept under the record's "legacy" object, which the record
// carries as an unknown field:
//
//	"legacy": {
//	  "from": "seed001",              // Format.String() of the original
//	  "version": "2.0",               // the original's own version field, if it had one
//	  "source": "workflow-state.json",// Extra.Name's last element, if given
//	  "migrated_at": "RFC3339",       // the now passed to Convert
//	  "fields": {...},                // original fields not carried over as they were
//	  "renamed": {"planning": "plan"},// names changed by more than lower-casing
//	  "execution": {...}              // seed 002's execution.json, when not fully carried
//	}
//
// Lower-casing a name and rewriting a time as UTC RFC 3339 are not recorded: the backup of
// the original keeps its exact bytes. A record written by a newer Cairn is refused, never
// rewritten, and a document that is none of the known formats is refused rather than guessed
// at.
package migrate
