package migrate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// seed001 maps .claude/workflow-state.json: type (APEX, DEBUG, BRAINSTORM, ONESHOT) is
// lower-cased into the type, phase is the state, lastUpdated updated_at, startedAt created_at,
// completedAt completed_at, completedPhases and phaseHistory the phases, and ttl, context,
// enforcement, status and approvals keep their meaning.
func (c *conv) seed001() {
	c.field(setIf(&c.rec.Type, c.nameOf), "type")
	c.field(setIf(&c.rec.State, c.nameOf), "phase", "state", "currentPhase")
	c.field(c.addCompleted, "completedPhases")
	c.field(c.addCompleted, "completed_phases")
	c.field(func(v any) bool {
		if isTransitions(v) {
			return c.addHistory(v)
		}
		return c.completedPhases(v, true)
	}, "phaseHistory")
	c.field(c.addPhases, "phases")
	c.common()
}

// isTransitions reports whether v is a list of {"from", "to", ...} entries.
func isTransitions(v any) bool {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return false
	}
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok || !has(m, "to") {
			return false
		}
	}
	return true
}

// seed002 maps memory/state/phase.json (type dotagent): current_phase is the state,
// completed_phases the phases (output -> outputs), user_checkpoints the approvals, started_at
// created_at, last_updated updated_at; workflow_id, phase_status and interruption_safe carry
// over. execution.json's tasks become the record's tasks. There is no status field: the
// workflow is completed when reflection, its last phase, is complete.
func (c *conv) seed002(execution []byte) error {
	c.rec.Type = "dotagent"
	c.field(setIf(&c.rec.State, c.nameOf), "current_phase")
	c.field(c.addCompleted, "completed_phases")
	c.field(c.addApprovals, "user_checkpoints")
	c.common()
	if c.rec.Status == "" {
		if p := c.ph["reflection"]; p != nil && p.Completed {
			c.rec.Status = "completed"
			c.rec.CompletedAt = p.CompletedAt
		} else if c.rec.State == "reflection" && c.rec.PhaseStatus == "complete" {
			c.rec.Status = "completed"
		}
	}
	if len(execution) == 0 {
		return nil
	}
	exec, err := decodeObject(execution)
	if err != nil {
		return fmt.Errorf("reading execution.json: %w", err)
	}
	clean := len(exec) == 0
	if v, ok := exec["tasks"]; ok {
		tasks, ok := c.parseTasks(v)
		c.rec.Tasks = append(c.rec.Tasks, tasks...)
		clean = ok && len(exec) == 1
	}
	if !clean {
		c.legacy["execution"] = exec
	}
	return nil
}

// seed003 maps a checkpoint (.claude/checkpoints/<command>.json). Its commands coordinate,
// orchestrate and implement all run seed 003's one state machine, so the type is coordinate
// whatever the command (kept under legacy.fields.command); state and phase names are mapped
// onto coordinate's phases (planning -> plan, implementation -> implement, testing -> test,
// documentation -> document). reports become outputs, plan_path an output and PLAN_PATH,
// topic_path TOPIC_PATH; scope, workflow_id, created_at and updated_at carry over. Reaching
// complete, coordinate's last phase, completes the workflow.
func (c *conv) seed003() {
	c.rec.Type = "coordinate"
	if v, ok := c.take("command"); ok {
		c.keep("command", v)
	}
	c.field(setIf(&c.rec.State, c.nameOf), "state", "current_state")
	c.field(func(v any) bool {
		s, _ := v.(string)
		if s != "" {
			c.setVar("TOPIC_PATH", s)
		}
		return s != ""
	}, "topic_path")
	c.field(c.addPhases, "phases")
	c.common()
	if c.rec.Status == "" && c.rec.State == "complete" {
		c.rec.Status = "completed"
	}
}

// seed004 maps .workflow-state/<name>-state.json: workflow is the type (else <name>),
// current_stage the state, stages the phases (a done stage is completed; its status, evidence
// and position go to the phase's metadata), artifacts, created_at and updated_at carry over,
// and notes become the context (its first line; the whole notes are kept under legacy when
// longer). The current stage's status is the phase_status; all stages done completes it.
func (c *conv) seed004() error {
	c.field(setIf(&c.rec.Type, c.nameOf), "workflow")
	if c.rec.Type == "" && c.source != "" {
		c.rec.Type = c.name(strings.TrimSuffix(strings.TrimSuffix(c.source, ".json"), "-state"))
	}
	if c.rec.Type == "" {
		return fmt.Errorf("%w: no usable \"workflow\" field and no file name to take it from", errNoType)
	}
	var order []string
	c.field(func(v any) (clean bool) {
		order, clean = c.addStages(v)
		return clean
	}, "stages")
	c.field(setIf(&c.rec.State, c.nameOf), "current_stage")
	c.field(func(v any) bool {
		s, isStr := v.(string)
		if !isStr || has(c.in, "context") {
			return false
		}
		line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
		line = strings.TrimSpace(line)
		if r := []rune(line); len(r) > 200 {
			line = string(r[:200]) + "…"
		}
		c.rec.Context = line
		return line == s
	}, "notes")
	c.common()
	if len(order) == 0 {
		return nil
	}
	undone := slices.IndexFunc(order, func(id string) bool { return !c.ph[id].Completed })
	if c.rec.State == "" {
		c.rec.State = order[len(order)-1]
		if undone >= 0 {
			c.rec.State = order[undone] // the first stage not done
		}
	}
	if c.rec.PhaseStatus == "" {
		if p := c.ph[c.rec.State]; p != nil {
			var s string
			if json.Unmarshal(p.Metadata["status"], &s) == nil {
				c.rec.PhaseStatus = normPhaseStatus(s)
			}
		}
	}
	if c.rec.Status == "" && undone < 0 {
		c.rec.Status = "completed"
	}
	return nil
}

// addStages reads seed 004's stages list and returns the phase names in order.
func (c *conv) addStages(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	clean := true
	var order []string
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			// A bare name is a stage with nothing known about it; anything else has no place.
			s, isStr := item.(string)
			m, clean = map[string]any{}, false
			if !isStr {
				continue
			}
			m["id"] = s
		}
		used := map[string]bool{}
		name := ""
		if k, v, ok := firstOf(m, "id", "name", "stage"); ok {
			if s, ok := asText(v); ok {
				name, used[k] = c.name(s), true
			}
		}
		if name == "" {
			// Keep the stage, and its place in the order, under a made-up name.
			name, clean = "stage-"+strconv.Itoa(i+1), false
		}
		if c.ph[name] != nil {
			clean = false // a repeated id: the first one counts, the original stages stay in legacy
			continue
		}
		p := c.phase(name)
		if s, ok := m["status"].(string); ok {
			p.Completed = normPhaseStatus(s) == "complete"
		}
		setMetadata(p, "order", i+1) // what the stage says of itself, status too, goes after
		for k, v := range m {
			if !used[k] {
				setMetadata(p, k, v)
			}
		}
		order = append(order, name)
	}
	return order, clean
}

// schema1 maps a Cairn schema-1.x record: its fields already have the record's names and
// meanings (with seed spellings accepted: phase or current_phase for state, command for a
// seed 003 style type, completed_phases, user_checkpoints); revision carries over. Fields the
// record does not know stay top-level fields, as unknown fields do in a 2.0 record.
func (c *conv) schema1() {
	c.extra = map[string]any{}
	if v, ok := c.take("legacy"); ok {
		c.keep("legacy", v)
	}
	if v, ok := c.take("type"); ok {
		if !setIf(&c.rec.Type, c.nameOf)(v) {
			c.keep("type", v)
		}
	} else if v, ok := c.take("command"); ok {
		c.keep("command", v)
		if _, isStr := v.(string); isStr {
			c.rec.Type = "coordinate" // seed 003 style: see seed003
		}
	}
	c.field(setIf(&c.rec.State, c.nameOf), "state", "phase", "current_phase", "current_state")
	c.field(c.addPhases, "phases")
	c.field(c.addCompleted, "completed_phases")
	c.field(c.addCompleted, "completedPhases")
	c.field(c.addApprovals, "user_checkpoints")
	if v, ok := c.take("revision"); ok {
		if n, isCount := asCount(v); isCount && n >= 1 {
			c.rec.Revision = int64(n)
		} else {
			c.keep("revision", v)
		}
	}
	c.common()
}
