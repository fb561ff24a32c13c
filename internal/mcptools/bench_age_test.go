package mcptools_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/mcptools"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// agedTransitions is how old the aged workflow is.
const agedTransitions = 10000

var (
	agedOnce  sync.Once
	agedState string // a state directory holding one apex workflow after agedTransitions moves
	agedErr   error
	agedMB    float64
)

// ageWorkflow writes n transitions of one apex workflow (implement <-> review) through the
// store as the engine does: the same record, trimmed history, events and journal lines.
func ageWorkflow(dir string, n int) error {
	s, err := store.Open(dir)
	if err != nil {
		return err
	}
	defer s.Close()
	def, _ := workflow.BuiltinDefinition("apex")
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	by := workflow.Actor{SessionID: "sess-1", PID: 1}
	step := func(i int) error {
		_, err := s.UpdateWorkflow(func(cur []byte) ([]byte, store.Event, error) {
			var res workflow.Result
			var err error
			now = now.Add(time.Minute)
			if cur == nil {
				res, err = workflow.Start(def, nil, workflow.StartRequest{Type: "apex", Context: "an aged workflow"}, now, by)
			} else {
				var r workflow.Record
				if err := json.Unmarshal(cur, &r); err != nil {
					return nil, store.Event{}, err
				}
				to := map[string]string{"analyze": "plan", "plan": "implement", "implement": "review", "review": "implement"}[r.State]
				res, err = workflow.Transition(def, &r, workflow.TransitionRequest{To: to, Note: fmt.Sprintf("round %d", i)}, now, by)
				res.Record.Revision = r.Revision + 1
			}
			if err != nil {
				return nil, store.Event{}, err
			}
			workflow.TrimHistory(res.Record)
			if res.Record.Revision == 0 {
				res.Record.Revision = 1
			}
			data, err := json.Marshal(res.Record)
			detail, _ := json.Marshal(map[string]string{"actor": "agent", "session": "sess-1", "from": res.From, "to": res.To})
			return data, store.Event{Kind: string(res.Event), Detail: string(detail)}, err
		})
		return err
	}
	for i := 0; i <= n; i++ {
		if err := step(i); err != nil {
			return fmt.Errorf("transition %d: %w", i, err)
		}
	}
	return nil
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// agedProject is a project whose workflow has made agedTransitions moves.
func agedProject(b *testing.B) *project {
	agedOnce.Do(func() {
		// Built on tmpfs where there is one: its fsyncs cost nothing, and the 10,000 durable
		// writes of the set-up are not what is measured (the copy below is on the test's disk).
		tmp := ""
		if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
			tmp = "/dev/shm"
		}
		agedState, agedErr = os.MkdirTemp(tmp, "cairn-aged-")
		if agedErr == nil {
			agedErr = ageWorkflow(agedState, agedTransitions)
			agedMB = float64(dirSize(agedState)) / 1e6
		}
	})
	if agedErr != nil {
		b.Fatal(agedErr)
	}
	p := newProject(b)
	durabletest.CopyTree(b, agedState, p.state)
	return p
}

// BenchmarkTransitionAged compares a transition of a workflow that has made agedTransitions
// moves with one of a workflow that has made about ten, interleaved so disk noise hits both,
// in-process (engine) and through the MCP server (in-process client). Targets: old/young at
// most 1.3, and the aged state directory at most 10 MB (MB-state).
func BenchmarkTransitionAged(b *testing.B) {
	run := func(b *testing.B, open func(p *project) func(to string) error) {
		young, old := newProject(b), agedProject(b)
		// The moves cross apex's approval gate (plan): a person turned gates off for these
		// projects, as the cost measured here is the write's.
		for _, p := range []*project{young, old} {
			if err := os.MkdirAll(p.state, 0o700); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(p.state, "config.json"), []byte(`{"approvals": false}`), 0o600); err != nil {
				b.Fatal(err)
			}
		}
		ym, om := open(young), open(old)
		if err := ym("start"); err != nil {
			b.Fatal(err)
		}
		yState, oState := "analyze", "review"
		next := func(st string) string {
			return map[string]string{"analyze": "plan", "plan": "implement", "implement": "review", "review": "implement"}[st]
		}
		// Warm both up (the first call catches up on L2 and caches definitions).
		for range 10 {
			yState = next(yState)
			if err := ym(yState); err != nil {
				b.Fatal(err)
			}
		}
		oState = next(oState)
		if err := om(oState); err != nil {
			b.Fatal(err)
		}
		var ty, to time.Duration
		moves := 10
		for b.Loop() {
			if moves >= 20 {
				// Keep the young one young: a fresh workflow every ten moves, untimed.
				if err := ym("start"); err != nil {
					b.Fatal(err)
				}
				yState, moves = "analyze", 0
				for range 10 {
					yState = next(yState)
					if err := ym(yState); err != nil {
						b.Fatal(err)
					}
				}
				moves = 10
			}
			yState, oState = next(yState), next(oState)
			t0 := time.Now()
			if err := ym(yState); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if err := om(oState); err != nil {
				b.Fatal(err)
			}
			ty += t1.Sub(t0)
			to += time.Since(t1)
			moves++
		}
		reportPair(b, ty, to, "young", "aged")
		b.ReportMetric(agedMB, "MB-state")
	}
	b.Run("engine", func(b *testing.B) {
		run(b, func(p *project) func(string) error {
			e, err := engine.Open(engine.Config{Getenv: p.getenv(p.session), WorkDir: p.root, SessionID: p.session, Actor: "agent", YAML: yamldoc.Codec{}})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { e.Close() })
			return func(to string) error {
				if to == "start" {
					_, err := e.Start(engine.StartRequest{Type: "apex", Context: "young", Replace: true})
					return err
				}
				_, err := e.Transition(engine.TransitionRequest{To: to})
				return err
			}
		})
	})
	b.Run("mcp", func(b *testing.B) {
		run(b, func(p *project) func(string) error {
			srv := mcptools.New(mcptools.Options{Open: mcptools.OpenEngine, Getenv: p.getenv(p.session), WorkDir: p.root, PPID: 1, Log: quietLog(), NoWatch: true})
			b.Cleanup(func() { srv.Close(testCtx(b)) })
			c := connect(b, srv)
			return func(to string) error {
				req, args := "transition", `{"to":"`+to+`"}`
				if to == "start" {
					req, args = "start_workflow", `{"type":"apex","context":"young","replace":true}`
				}
				res := callRaw(b, c, req, args)
				if res.IsError {
					return fmt.Errorf("%s: %v", to, res.Content)
				}
				return nil
			}
		})
	})
}

// plantArchives writes n archives the way the store leaves them (directory, snapshot,
// archive.json, index line) without n fsyncs.
func plantArchives(b *testing.B, state string, n int) {
	arch := filepath.Join(state, "archive")
	if err := os.MkdirAll(arch, 0o700); err != nil {
		b.Fatal(err)
	}
	var index []byte
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("apex-20260101T000000Z-%04x", i)
		info := store.ArchiveInfo{Dir: id + "-" + at.Add(time.Duration(i)*time.Second).Format("20060102T150405.000Z"),
			WorkflowID: id, Reason: "completed", At: at.Add(time.Duration(i) * time.Second), Revision: 7,
			Type: "apex", Phase: "git-commit", Context: fmt.Sprintf("archived workflow number %d", i), UpdatedAt: at}
		line, _ := json.Marshal(info)
		index = append(append(index, line...), '\n')
		dir := filepath.Join(arch, info.Dir)
		rec, _ := json.Marshal(map[string]any{"version": "2.0", "workflow_id": id, "type": "apex", "state": "git-commit",
			"status": "completed", "context": info.Context, "revision": 7})
		if err := os.Mkdir(dir, 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "workflow-state.json"), rec, 0o600); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "archive.json"), line, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(arch, "index.jsonl"), index, 0o600); err != nil {
		b.Fatal(err)
	}
}
