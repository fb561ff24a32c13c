package migrate

import (
	"encoding/json"
	"testing"
)

// FuzzConvertStructured builds JSON documents out of the fuzzer's bytes from the field names
// and value shapes the converters look at, so the fuzzer spends its time inside Convert
// rather than on bytes that are not JSON. The properties are FuzzMigrate's.
func FuzzConvertStructured(f *testing.F) {
	for _, s := range []string{
		"\x00\x05seed", "\x01\x07\x03\x02\x01\x00", "\x02abcdefghijklmnop", "\x03\x10\x20\x30\x40\x50\x60",
		"\x04\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8", "\x05\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01",
		"\x06\x06\x06\x06\x06\x06\x06\x06\x06\x06\x06\x06", "\x07\x99\x42\x17\x08\x33\x61\x06\x15\x27",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, seed []byte) {
		g := &gen{b: seed}
		doc := g.document()
		data, err := json.Marshal(doc)
		if err != nil {
			t.Skip() // a generated value encoding/json cannot write; not the code under test
		}
		var execution []byte
		if g.next()%2 == 0 {
			execution, _ = json.Marshal(map[string]any{"tasks": g.value(2), g.key(): g.value(1)})
		}
		got, derr := Detect(data)
		for fm := Unknown; fm <= Seed004; fm++ {
			extra := Extra{Name: g.pick(fileNames)}
			if fm == Seed002 {
				extra.Execution = execution
			}
			out, err := convert(fm, data, extra, testNow)
			if err != nil {
				continue
			}
			if fm != got || derr != nil {
				t.Fatalf("convert(%v) succeeded on a %v document", fm, got)
			}
			if fm == Current {
				continue
			}
			if err := checkRecord(out); err != nil {
				t.Fatalf("convert(%v) of %s fails the record check: %v\n%s", fm, data, err, out)
			}
			if f2, err := Detect(out); f2 != Current || err != nil {
				t.Fatalf("migrated record of %s detected as %v, %v", data, f2, err)
			}
		}
	})
}

var (
	fuzzKeys = []string{
		"version", "type", "phase", "state", "lastUpdated", "startedAt", "ttl", "context", "enforcement",
		"violations", "blocking", "summary", "code", "severity", "details", "status", "completedAt",
		"completedPhases", "phaseHistory", "approvals", "outcome", "scope", "artifacts", "workflow_id",
		"started_at", "last_updated", "current_phase", "phase_status", "completed_phases", "output",
		"user_checkpoints", "approved_at", "requested_at", "approved", "interruption_safe", "command",
		"topic_path", "phases", "completed", "reports", "plan_path", "metadata", "created_at",
		"updated_at", "completed_at", "workflow", "current_stage", "stages", "id", "evidence", "notes",
		"tasks", "attempts", "history", "from", "to", "at", "vars", "owner", "pid", "heartbeat",
		"revision", "legacy", "name", "outputs", "note", "error", "task_id", "output_file",
	}
	fuzzStrings = []string{
		"", "APEX", "apex", "DEBUG", "ONESHOT", "REQUIREMENTS", "reflection", "complete", "planning",
		"implement", "Git Commit", "2.0", "1.0", "3.0", "1", "done", "running", "pending", "failed",
		"completed", "in_progress", "blocked", "24h", "7d", "0h", "2026-02-11T14:00:00Z",
		"2026-02-11 14:00:00", "2026-02-11T14:00:00+0100", "2026-02-11", "9999-12-31T23:59:59Z",
		"0000-01-01T00:00:00Z", "1770818400", "true", "con", "..", "a/b", "Ω", "-", "HIGH",
		"release-state.json", "x\u202ey", "stage-1", "\x00",
	}
	fuzzNumbers = []string{"0", "1", "2", "3", "-1", "1.5", "1e3", "1770818400", "1770818400000", "99999999999999999999", "2.0"}
	fileNames   = []string{"", "workflow-state.json", "phase.json", "x-state.json", "-state.json", ".json", "a/b/release-state.json", "Ω-state.json"}
)

type gen struct {
	b []byte
	i int
}

func (g *gen) next() byte {
	if g.i >= len(g.b) {
		return 0
	}
	c := g.b[g.i]
	g.i++
	return c
}

func (g *gen) pick(list []string) string { return list[int(g.next())%len(list)] }

func (g *gen) key() string { return g.pick(fuzzKeys) }

// document starts from one format's marker fields (or none), so every converter gets its
// share, then adds fields at random.
func (g *gen) document() map[string]any {
	var doc map[string]any
	switch g.next() % 6 {
	case 0:
		doc = map[string]any{}
	case 1:
		doc = map[string]any{"type": g.pick(fuzzStrings), "phase": g.value(1)}
	case 2:
		doc = map[string]any{"current_phase": g.value(1)}
	case 3:
		doc = map[string]any{"version": "2.0", "command": g.pick(fuzzStrings), "state": g.value(1)}
	case 4:
		doc = map[string]any{"workflow": g.value(1), "version": json.Number("1"), "stages": g.value(2)}
	default:
		doc = map[string]any{"version": "1.0", "type": g.value(1), "state": g.value(1)}
	}
	for n := int(g.next() % 12); n > 0; n-- {
		doc[g.key()] = g.value(3)
	}
	return doc
}

func (g *gen) value(depth int) any {
	kind := g.next() % 10
	if depth <= 0 && kind >= 6 {
		kind = 3
	}
	switch kind {
	case 0:
		return nil
	case 1:
		return g.next()%2 == 0
	case 2:
		return json.Number(g.pick(fuzzNumbers))
	case 3, 4, 5:
		return g.pick(fuzzStrings)
	case 6, 7:
		var list []any
		for n := int(g.next() % 4); n > 0; n-- {
			list = append(list, g.value(depth-1))
		}
		return list
	default:
		m := map[string]any{}
		for n := int(g.next() % 5); n > 0; n-- {
			k := g.key()
			if g.next()%4 == 0 {
				k = g.pick(fuzzStrings)
			}
			m[k] = g.value(depth - 1)
		}
		return m
	}
}
