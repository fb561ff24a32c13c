package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/strictjson"
	"github.com/cairn-dev/cairn/internal/vars"
)

// jsonArg is the JSON argument of checkpoint save and log append: the argument itself, or
// stdin when it is "-" or absent (the seeds pass JSON both ways). Stdin is read up to one byte
// past the store's limit, so an oversized document is refused by the store's own check
// rather than read whole.
func (a *app) jsonArg(pos []string) (json.RawMessage, error) {
	if len(pos) > 0 && pos[0] != "-" {
		return json.RawMessage(pos[0]), nil
	}
	if isTerminal(a.stdin) {
		// A person typing `cairn checkpoint save x` would otherwise wait on a silent terminal.
		return nil, a.usageErr("no JSON: give it as an argument, or pipe it on stdin")
	}
	data, err := io.ReadAll(io.LimitReader(a.stdin, strictjson.MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading the JSON from stdin: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, a.usageErr("no JSON: give it as an argument, or on stdin with - or no argument")
	}
	return data, nil
}

// notJSON says, in Cairn's words, that data is not one JSON value, where it goes wrong and
// what would be right; nil when it is JSON (the store still checks it: size, secrets). The
// data itself is not repeated: it may hold what should not be printed.
func notJSON(what string, data []byte, example string) error {
	if len(data) > strictjson.MaxSize {
		return nil // the store refuses it for its size, which is what is wrong
	}
	// Into a RawMessage: its syntax only (a number beyond float64 is the store's to refuse,
	// where it says which byte).
	err := json.Unmarshal(data, new(json.RawMessage))
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s is not JSON%s: give one JSON value, like %s", what, wrongAt(err), example)
}

// wrongAt is " (it goes wrong at byte N)" for a JSON syntax error, else "".
func wrongAt(err error) string {
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return fmt.Sprintf(" (it goes wrong at byte %d)", se.Offset)
	}
	return ""
}

// jsonWrite is the run of checkpoint save and log append: NAME and a JSON value (what, like
// example), checked here (the store checks the name again) and written by write.
func jsonWrite(what, example string, write func(*engine.Engine, string, json.RawMessage) (*engine.Result, error)) func(*app, []string, *engine.Engine) error {
	return func(a *app, pos []string, _ *engine.Engine) error {
		data, err := a.jsonArg(pos[1:])
		if err != nil {
			return err
		}
		if err := notJSON(what, data, example); err != nil {
			return err
		}
		// In a project with no state directory, written first where it is read without making
		// it (in memory): what the store refuses (the name, a secret) makes none.
		e, err := a.engineChecked(func(e *engine.Engine) error {
			_, err := write(e, pos[0], data)
			return err
		})
		if err != nil {
			return err
		}
		return a.wrote(write(e, pos[0], data))
	}
}

func runCheckpointLoad(a *app, pos []string, e *engine.Engine) error {
	load := e.LoadCheckpoint
	if a.opt.orEmpty {
		load = e.LoadCheckpointOrEmpty
	}
	data, err := load(pos[0])
	if errors.Is(err, engine.ErrNotFound) {
		return missingCheckpoint(e, pos[0], err, true)
	}
	if err != nil {
		file := filepath.Join(e.StateDir(), store.CheckpointFile(pos[0]))
		return engine.UnreadableCheckpoint(pos[0], err, "the whole checkpoint is the file "+file+": less "+vars.Quote(file)+" reads it")
	}
	// Checkpoints are the project's, kept across workflows: one saved before this workflow
	// started is said to be on stderr, as load_checkpoint says it; stdout is the JSON alone.
	a.warn(e.CheckpointBefore(pos[0]))
	// The stored JSON is the output, --json or not (safe for a terminal: the same value).
	data = safeJSON(data)
	if !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data, '\n')
	}
	_, err = a.stdout.Write(data)
	return err
}

func runCheckpointList(a *app, pos []string, e *engine.Engine) error {
	names, err := e.ListCheckpoints(optional(pos, ""))
	if errors.Is(err, path.ErrBadPattern) {
		return fmt.Errorf("%w: a PATTERN is a glob such as 'research*' or 'plan_v[0-9]', quoted so the shell leaves it as it is", err)
	}
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(orEmpty(names))
	}
	for _, n := range names {
		fmt.Fprintln(a.stdout, n)
	}
	return nil
}

func runVarsSet(a *app, pos []string, e *engine.Engine) error {
	return a.wrote(e.SetVars(map[string]string{pos[0]: pos[1]}))
}

// readVars is the variables keys name (all for none), what the read said on stderr: stdout is
// the values alone.
func (a *app) readVars(e *engine.Engine, keys []string) (map[string]string, error) {
	r, err := e.ReadVars(keys)
	a.warn(append(r.Notices, r.Withheld...)...)
	return r.Vars, err
}

func runVarsGet(a *app, pos []string, e *engine.Engine) error {
	kv, err := a.readVars(e, pos)
	if err != nil {
		return err
	}
	v, ok := kv[pos[0]]
	if !ok {
		if err := neverSet(pos[0], kv); err != nil {
			return err
		}
		// Named: one a set would take (neverSet), so no secret's shape, and a script's
		// several gets are told apart.
		if all, err := e.GetVars(nil); err == nil && len(all) == 0 {
			return engine.NotFoundMsg("variable " + pos[0] + " is not set: no variable is set in this workflow yet")
		}
		return engine.NotFoundMsg("variable " + pos[0] + " is not set: cairn show lists the workflow's variables")
	}
	// The value exactly, as $(cairn vars get KEY) expects; one newline ends it.
	if !a.json {
		v = a.terminalSafe(v)
	}
	return a.answer(kv, "%s", v)
}

// neverSet refuses key when vars set refuses it (PATH, plan_path), saying so as set does,
// unless set holds it: a record an older Cairn wrote may hold such a name.
func neverSet(key string, set map[string]string) error {
	if _, ok := set[key]; ok {
		return nil
	}
	return vars.ValidKey(key)
}

// terminalSafe is s, or on a terminal s with what could act on it shown as ? (forTerminal),
// said on stderr: captured or piped, data stays as stored.
func (a *app) terminalSafe(s string) string {
	if !isTerminal(a.stdout) {
		return s
	}
	safe, changed := forTerminal(s)
	if changed {
		a.warn("the value holds control or invisible characters, shown as ? on this terminal; captured or piped it is printed as stored")
	}
	return safe
}

func runVarsExport(a *app, _ []string, e *engine.Engine) error {
	kv, err := a.readVars(e, nil)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(kv)
	}
	_, err = io.WriteString(a.stdout, a.terminalSafe(vars.Export(kv)))
	return err
}
