package migrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// checkRecord is Convert's own postcondition: data is strict JSON and, read as a generic map,
// has the brief's required fields with the brief's types and value sets. It checks form, not
// whether the phases fit a workflow definition (internal/workflow does that).
func checkRecord(data []byte) error {
	v, err := decodeStrict(data)
	if err != nil {
		return err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return errors.New("not an object")
	}
	for _, k := range []string{"version", "workflow_id", "type", "state", "phase_status", "status", "phases", "ttl", "created_at", "updated_at", "revision"} {
		if _, ok := m[k]; !ok {
			return fmt.Errorf("missing %s", k)
		}
	}
	if m["version"] != "2.0" {
		return fmt.Errorf("version is %v, not \"2.0\"", m["version"])
	}
	// The nested checks are built here, not at package start-up: every hook process links
	// this package, few ever migrate.
	checkPhase := fieldsOf(map[string]func(any) error{
		"completed": isBool, "completed_at": isTime, "outputs": arrayOf(isStr), "metadata": isObject,
	}, []string{"completed"})
	checkHistory := fieldsOf(map[string]func(any) error{
		"from": func(v any) error {
			if v == "" {
				return nil
			}
			return match(nameRe)(v)
		},
		"to": match(nameRe), "at": isTime, "session_id": isStr, "note": isStr,
	}, []string{"from", "to", "at"})
	checkTask := fieldsOf(map[string]func(any) error{
		"id": func(v any) error {
			if v == "" {
				return errors.New("empty id")
			}
			return isStr(v)
		},
		"status": oneOf("pending", "running", "done", "failed"), "attempts": isCount,
		"output": isStr, "note": isStr, "started_at": isTime, "completed_at": isTime, "updated_at": isTime,
	}, []string{"id", "status", "attempts"})
	checkApproval := fieldsOf(map[string]func(any) error{
		"phase": match(nameRe), "requested_at": isTime, "approved_at": isTime,
	}, []string{"phase"})
	checkEnforcement := fieldsOf(map[string]func(any) error{
		"violations": arrayOf(fieldsOf(map[string]func(any) error{"code": isStr, "severity": isStr, "details": isStr}, nil)),
		"blocking":   isBool,
		"summary":    isStr,
	}, []string{"violations", "blocking"})
	checks := map[string]func(any) error{
		"workflow_id":       match(idRe),
		"type":              match(nameRe),
		"context":           isStr,
		"scope":             isStr,
		"state":             match(nameRe),
		"phase_status":      oneOf("pending", "in_progress", "complete", "failed", "blocked"),
		"status":            oneOf("active", "completed", "expired", "archived"),
		"phases":            objectOf(checkPhase, true),
		"history":           arrayOf(checkHistory),
		"tasks":             arrayOf(checkTask),
		"approvals":         arrayOf(checkApproval),
		"artifacts":         arrayOf(isStr),
		"vars":              objectOf(isStr, false),
		"enforcement":       checkEnforcement,
		"ttl":               checkTTL,
		"created_at":        isTime,
		"updated_at":        isTime,
		"completed_at":      isTime,
		"outcome":           isStr,
		"owner":             fieldsOf(map[string]func(any) error{"session_id": isStr, "pid": isCount, "heartbeat": isTime}, nil),
		"interruption_safe": isBool,
		"revision":          isRevision,
	}
	for _, k := range sortedKeys(m) {
		if check, ok := checks[k]; ok {
			if err := check(m[k]); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
	}
	return nil
}

func isStr(v any) error {
	if _, ok := v.(string); !ok {
		return fmt.Errorf("a %s, not a string", jsonKind(v))
	}
	return nil
}

func isBool(v any) error {
	if _, ok := v.(bool); !ok {
		return fmt.Errorf("a %s, not a boolean", jsonKind(v))
	}
	return nil
}

func isCount(v any) error {
	n, ok := v.(json.Number)
	if !ok {
		return fmt.Errorf("a %s, not a number", jsonKind(v))
	}
	if i, err := n.Int64(); err != nil || i < 0 {
		return fmt.Errorf("%s is not a whole number of at least 0", n)
	}
	return nil
}

func isRevision(v any) error {
	if err := isCount(v); err != nil {
		return err
	}
	if i, _ := v.(json.Number).Int64(); i < 1 {
		return errors.New("below 1")
	}
	return nil
}

func isTime(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("a %s, not a time", jsonKind(v))
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	if _, off := t.Zone(); off != 0 {
		return fmt.Errorf("%q is not UTC", s)
	}
	return nil
}

func checkTTL(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("a %s, not a duration", jsonKind(v))
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if d <= 0 {
		return fmt.Errorf("%q is not positive", s)
	}
	return nil
}

func match(re interface{ MatchString(string) bool }) func(any) error {
	return func(v any) error {
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("a %s, not a string", jsonKind(v))
		}
		if !re.MatchString(s) {
			return fmt.Errorf("%q is not a valid name", s)
		}
		return nil
	}
}

func oneOf(allowed ...string) func(any) error {
	return func(v any) error {
		s, _ := v.(string)
		for _, a := range allowed {
			if s == a {
				return nil
			}
		}
		return fmt.Errorf("%v is not one of %v", v, allowed)
	}
}

func arrayOf(check func(any) error) func(any) error {
	return func(v any) error {
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("a %s, not an array", jsonKind(v))
		}
		for i, e := range list {
			if err := check(e); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return nil
	}
}

// objectOf checks every value of an object; names also checks the keys are Cairn names.
func objectOf(check func(any) error, names bool) func(any) error {
	return func(v any) error {
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("a %s, not an object", jsonKind(v))
		}
		for _, k := range sortedKeys(m) {
			if names && !nameRe.MatchString(k) {
				return fmt.Errorf("%q is not a valid name", k)
			}
			if err := check(m[k]); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
		return nil
	}
}

// fieldsOf checks an object's known fields and that the required ones are there.
func fieldsOf(fields map[string]func(any) error, required []string) func(any) error {
	return func(v any) error {
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("a %s, not an object", jsonKind(v))
		}
		for _, k := range required {
			if _, ok := m[k]; !ok {
				return fmt.Errorf("missing %s", k)
			}
		}
		for _, k := range sortedKeys(m) {
			if check, ok := fields[k]; ok {
				if err := check(m[k]); err != nil {
					return fmt.Errorf("%s: %w", k, err)
				}
			}
		}
		return nil
	}
}

func isObject(v any) error {
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("a %s, not an object", jsonKind(v))
	}
	return nil
}
