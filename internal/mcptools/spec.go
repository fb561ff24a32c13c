package mcptools

import (
	"cmp"
	"encoding/json"
	"maps"
	"regexp"
	"strings"

	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/vars"
	"github.com/mark3labs/mcp-go/mcp"
)

// kind is the JSON shape an argument must have. One spec per tool drives both the input schema
// the client sees and the decoder that checks what it sends, so the two cannot drift apart.
type kind int

const (
	kString     kind = iota // a JSON string
	kBool                   // true or false
	kStrings                // an array of strings
	kObject                 // a JSON object, kept raw
	kJSON                   // a JSON object or array, kept raw
	kStringMap              // an object whose values are strings
	kViolations             // an array of {code, severity, details}
)

// field is one argument of a tool.
type field struct {
	name      string
	kind      kind
	required  bool
	desc      string
	enum      []string       // allowed values (strings; matched case-insensitively when fold)
	fold      bool           // enum match ignores letter case; the value is normalised to the enum's spelling
	max       int            // strings: runes; arrays: items; objects: bytes
	itemMax   int            // array items, map values: runes
	keyMax    int            // map keys: runes
	pattern   *regexp.Regexp // strings, array items, map keys
	hint      string         // what a valid value looks like, said when pattern fails
	multiline bool           // newlines and tabs allowed
	minLen    int            // strings: at least this many runes (required strings default to 1)
	glob      bool           // strings: a path.Match pattern, whose brackets the regexp cannot check
	// fileName: strings that name a file, checked after pattern by the store's own rule
	// (store.ValidName, store.ValidWorkflowID), which also refuses Windows device names.
	fileName func(string) error
	// rule: strings and array items checked after pattern by the value's own rule (what the
	// pattern cannot say), refused with hint.
	rule func(string) error
	// same: a value pattern refuses, in the accepted form ("1d12h" is "36h"), said as the
	// step; "" when it has none.
	same func(string) string
	// why: why a value pattern refuses, when hint alone does not say it ("1s": seconds are
	// no unit); "" when it has no more to say.
	why func(string) string
	// maxUnlisted: max is checked when the call runs but left out of the schema, for the tool
	// definitions' budget (the refusal says the limit).
	maxUnlisted bool
	// synonyms: other words taken for an enum value (matched as enum is), left out of the
	// schema for the tool definitions' budget.
	synonyms map[string]string
}

// toolSpec describes one tool: its schema, its annotations and the handler.
type toolSpec struct {
	name        string
	title       string
	desc        string
	fields      []field
	readOnly    bool
	destructive bool
	idempotent  bool
	// onActive: it changes the active workflow, so a call made after another process put
	// another workflow in the slot is refused once rather than applied to that one.
	onActive bool
	output   string // JSON schema of structuredContent; resultOutput (an engine Result's) when ""
	run      func(c *call) (*outcome, error)
}

// Patterns for names. They are deliberately narrow: no path separators, no leading dot, no "..",
// so a name can never leave the directory it is meant for.
var (
	// namePattern is store.ValidName: lower case, no "..", no trailing '.' (at most 64 bytes).
	namePattern = regexp.MustCompile(`^[a-z0-9](?:\.?[a-z0-9_-])*$`)
	// wfIDPattern is what a workflow id must be to be stored (workflow.ValidID, the store's
	// id check): as a name, upper case allowed after the first character. The patterns are
	// written short, for the tool definitions' budget: \w is [A-Za-z0-9_], in JSON Schema's
	// regular expressions as in Go's.
	wfIDPattern  = regexp.MustCompile(`^[a-z0-9](?:\.?[\w-])*$`)
	globPattern  = regexp.MustCompile(`^[\w.*?\[\]-]+$`)     // with maxLength 100
	phasePattern = regexp.MustCompile(`^[A-Za-z0-9][\w-]*$`) // with maxLength 64
	// taskIDPattern is workflow.ValidTaskID's one line (its 128 bytes in the description): cairn task takes
	// such ids ("write the tests"), and the engine's messages name them; a new one the engine
	// would read as another (control or invisible characters) it refuses itself.
	taskIDPattern = regexp.MustCompile(`^[^\r\n\t]+$`)
	// varKeyPattern is the shape of vars.ValidKey's rule (upper-case words joined by _), short
	// enough for the tool definitions' budget; vars.ValidKey checks the first word (vars.Words)
	// and the length.
	varKeyPattern = regexp.MustCompile(`^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$`)
	// ttlPattern is workflow.ParseTTL's form: a whole number and one unit (its range, at most
	// 3650 days, is checked with the value).
	ttlPattern = regexp.MustCompile(`^0*[1-9][0-9]{0,6}[mhd]$`)
	// pointerPattern is a JSON Pointer's start (atPointer reads the rest), or empty: the whole.
	pointerPattern  = regexp.MustCompile(`^(/|$)`)
	violCodePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$`)
)

const (
	nameHint   = store.NameRule
	wfIDHint   = "letters, digits, '.', '_' or '-', starting with a lower-case letter or digit, at most 64 characters, no '..'"
	globHint   = "a glob over checkpoint names: letters, digits, '.', '_', '-', '*', '?', '[', ']', no '/'"
	phaseHint  = "a phase name: letters, digits, '_' or '-', starting with a letter or digit"
	taskIDHint = "one line, such as t1"
	ttlHint    = "a duration such as 24h, 90m or 7d"
	partHint   = "a JSON Pointer: it starts with '/' and names one key or array index per step, such as /files/0 (write '/' in a key as ~1 and '~' as ~0)"
)

// varHint names the first words a variable name may start with (vars.Words): a refusal that
// only said "a workflow word" left the next try to guess.
var varHint = "a workflow variable name: upper-case words joined by _, the first one of " +
	strings.Join(vars.Words, ", ") + " (PLAN_PATH, WF_BRANCH)"

// propertySchema renders one field as JSON Schema.
func (f field) propertySchema() map[string]any {
	p := map[string]any{}
	if f.desc != "" {
		p["description"] = f.desc
	}
	str := func() map[string]any {
		s := map[string]any{"type": "string"}
		if len(f.enum) > 0 {
			s["enum"] = f.enum
		}
		if f.pattern != nil && len(f.enum) == 0 {
			s["pattern"] = f.pattern.String()
		}
		return s
	}
	switch f.kind {
	case kString:
		maps.Copy(p, str())
		// A pattern already needs one character; minLength would only repeat it.
		if f.required && len(f.enum) == 0 && (f.pattern == nil || f.minLen > 1) {
			p["minLength"] = max(f.minLen, 1)
		}
	case kBool:
		p["type"] = "boolean"
	case kStrings:
		p["type"] = "array"
		item := str()
		if f.pattern == nil { // the decoder refuses an empty item; a pattern already needs one character
			item["minLength"] = 1
		}
		if f.itemMax > 0 {
			item["maxLength"] = f.itemMax
		}
		p["items"] = item
	case kObject:
		p["type"] = "object"
	case kJSON:
		p["type"] = []string{"object", "array"}
	case kStringMap:
		p["type"] = "object"
		v := map[string]any{"type": "string"}
		if f.itemMax > 0 {
			v["maxLength"] = f.itemMax
		}
		p["additionalProperties"] = v
		if f.pattern != nil {
			names := map[string]any{"pattern": f.pattern.String()}
			if f.keyMax > 0 {
				names["maxLength"] = f.keyMax
			}
			p["propertyNames"] = names
		}
	case kViolations:
		p["type"] = "array"
		p["items"] = map[string]any{
			"type": "object",
			"properties": map[string]any{
				"code":     map[string]any{"type": "string", "pattern": violCodePattern.String()},
				"severity": map[string]any{"type": "string", "enum": severities, "description": "CRITICAL and HIGH block."},
				"details":  map[string]any{"type": "string", "minLength": 1, "maxLength": 2000},
			},
			"required":             []string{"code", "severity", "details"},
			"additionalProperties": false,
		}
	}
	// max bounds runes, items or entries as the kind says; an object's bytes are not in the schema.
	if f.max > 0 && !f.maxUnlisted {
		switch f.kind {
		case kString:
			p["maxLength"] = f.max
		case kStrings, kViolations:
			p["maxItems"] = f.max
		case kStringMap:
			p["maxProperties"] = f.max
		}
	}
	return p
}

var (
	severities    = []string{"CRITICAL", "HIGH", "MEDIUM", "LOW", "INFO"}
	taskStatuses  = []string{"pending", "running", "done", "failed"}
	initiativeOps = []string{"get", "create", "set_status", "add_milestone", "update_milestone"}
	// taskSynonyms are Claude Code's own task statuses (TaskUpdate's), which a model sends
	// update_task as readily as Cairn's.
	taskSynonyms = map[string]string{"in_progress": "running", "completed": "done"}
)

// tool renders the spec as an mcp.Tool with every annotation set explicitly: mcp-go's default
// marks every tool destructive and open-world, which would be wrong for all of ours.
func (t *toolSpec) tool() mcp.Tool {
	props := make(map[string]any, len(t.fields))
	order := make([]string, 0, len(t.fields))
	var required []string
	for _, f := range t.fields {
		props[f.name] = f.propertySchema()
		order = append(order, f.name)
		if f.required {
			required = append(required, f.name)
		}
	}
	return mcp.Tool{
		Name:        t.name,
		Title:       t.title,
		Description: t.desc,
		InputSchema: mcp.ToolInputSchema{
			Type:                 "object",
			Properties:           props,
			PropertyOrder:        order,
			Required:             required,
			AdditionalProperties: false,
		},
		RawOutputSchema: json.RawMessage(cmp.Or(t.output, resultOutput)),
		Annotations: mcp.ToolAnnotation{
			Title:           t.title,
			ReadOnlyHint:    mcp.ToBoolPtr(t.readOnly),
			DestructiveHint: mcp.ToBoolPtr(t.destructive),
			IdempotentHint:  mcp.ToBoolPtr(t.idempotent),
			OpenWorldHint:   mcp.ToBoolPtr(false),
		},
	}
}
