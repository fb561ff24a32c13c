package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/fsx"
	"github.com/cairn-dev/cairn/internal/report"
	"github.com/cairn-dev/cairn/internal/store/migrate"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// Resume runs the read protocol: L1 (with the store's repairs), TTL expiry, recovery,
// integrity checks, then L2, then the directory scan, and builds the resume plan and report.
// With opt.Apply it changes state as the protocol says (expire and archive, recover tasks,
// settle owed L2 lines); without, it only reports.
func (e *Engine) Resume(ctx context.Context, opt ResumeOptions) (*Resume, error) {
	now := e.now()
	out := &Resume{}
	var eye []string // what the user should see in a systemMessage

	r, notices, err := e.active()
	for _, n := range notices {
		out.Notices = append(out.Notices, n.Message)
		if n.Kind == "quarantined" || n.Kind == "rebuilt" {
			eye = append(eye, n.Message)
		}
	}
	if err != nil {
		var newer *migrate.NewerError
		if errors.As(err, &newer) {
			msg := "the workflow state was written by a newer Cairn and is left untouched: " + err.Error()
			out.Warnings = append(out.Warnings, msg)
			eye = append(eye, msg)
		} else {
			msg := "the workflow state could not be read: " + err.Error()
			out.Warnings = append(out.Warnings, msg)
			eye = append(eye, msg)
		}
		r = nil
	}
	// A state directory not created yet (a command that only reads) is writable if it
	// can be created.
	l1ok := writable(e.st.Dir()) || !e.st.Exists() && creatable(e.st.Dir())
	if !l1ok {
		eye = append(eye, workflow.WarnL1Unavailable+" ("+e.st.Dir()+" is not writable)")
	}

	if r != nil && opt.Apply && l1ok {
		r = e.applyReadProtocol(r, now, opt.DryRun, out, &eye)
	} else if r != nil && r.Status == workflow.StatusActive {
		if expired, _ := r.Expired(now); expired {
			out.Warnings = append(out.Warnings, fmt.Sprintf("workflow %s has expired (inactive > %s); the next session start archives it", r.WorkflowID, ttlText(r.TTL)))
		}
	}
	if opt.Apply && l1ok {
		if _, w := e.settleL2(r); w != "" {
			out.Warnings = append(out.Warnings, w)
		}
	}

	var def *workflow.Definition
	var findings []workflow.Finding
	if r != nil {
		if d, err := e.definitionFor(r); err == nil {
			def = d
		} else {
			out.Warnings = append(out.Warnings, err.Error())
		}
		findings = workflow.Check(workflow.CheckInput{Def: def, Record: r, Now: now, Exists: e.exists, By: e.actor()})
		findings = e.dropEndedOwner(r, findings)
		for _, f := range findings {
			if f.Code == workflow.FindingOwnedElsewhere {
				eye = append(eye, f.Text)
			}
		}
	}

	l2ok := e.memWarn == ""
	l2line := ""
	if r == nil && l2ok {
		if last, ok, err := e.mem.LastPosition(); err == nil && ok {
			l2line = last.Text
		} else if err != nil {
			l2ok = false
			out.Warnings = append(out.Warnings, err.Error())
		}
	}
	if r == nil && l2line == "" {
		out.Notices = append(out.Notices, e.scanMilestones()...)
	}

	plan := workflow.BuildPlan(workflow.PlanInput{Record: r, Def: def, L1Available: l1ok, L2Available: l2ok,
		L2Line: l2line, Findings: findings, Now: now})
	out.Tier = tierName(plan.Tier)
	out.WorkflowID, out.Type, out.Context, out.Phase = plan.WorkflowID, plan.Type, plan.Context, plan.Phase
	out.PhaseStatus = string(plan.PhaseStatus)
	out.AgeSeconds = int64(plan.Age / time.Second)
	out.Completed, out.Allowed, out.Next = plan.Completed, plan.Allowed, plan.Next
	out.L2Line = plan.L2Line
	out.OpenTasks = workflow.OpenTasks(r)
	out.Warnings = append(out.Warnings, plan.Warnings...)
	for _, v := range plan.Blocking {
		out.Blocking = append(out.Blocking, Violation{Code: v.Code, Severity: string(v.Severity), Details: v.Details})
	}
	if r != nil {
		if !opt.ReportOnly {
			out.Workflow, _ = encodeRecord(r)
		}
	} else if plan.Next == "" {
		out.Next = "no active workflow: start one with start_workflow when the task has phases"
		if l2line != "" {
			out.Next = "no active workflow in L1; auto-memory's last line is shown: tell the user and start a new workflow if the work continues"
		}
	}
	out.Warnings = dedupe(out.Warnings)
	out.Report = e.render(out, plan)
	if len(eye) > 0 {
		out.SystemMessage = "Cairn: " + strings.Join(dedupe(eye), "; ")
		if len(out.SystemMessage) > 600 {
			out.SystemMessage = out.SystemMessage[:597] + "..."
		}
	}
	return out, nil
}

// applyReadProtocol archives a finished or expired workflow and recovers an interrupted one.
// It returns the record still active afterwards, or nil.
func (e *Engine) applyReadProtocol(r *workflow.Record, now time.Time, dryRun bool, out *Resume, eye *[]string) *workflow.Record {
	if !dryRun {
		r = e.resolveLegacy(r, out, eye)
	}
	if r.Status != workflow.StatusActive {
		// A finished workflow left in the active slot (a crash between completing and
		// archiving): archive it now, and owe its completion line.
		if dryRun {
			out.Notices = append(out.Notices, fmt.Sprintf("workflow %s is %s and would be archived", r.WorkflowID, r.Status))
			return r
		}
		if err := e.archiveActive(r, nil, archiveReason(r)); err != nil {
			out.Warnings = append(out.Warnings, "archiving the finished workflow failed: "+err.Error())
			return r
		}
		if r.Status == workflow.StatusCompleted {
			if w := e.writeL2(r.WorkflowID, r.Revision, workflow.CompletionLine(r)); w != "" {
				out.Warnings = append(out.Warnings, w)
			}
		}
		out.Notices = append(out.Notices, fmt.Sprintf("workflow %s was %s and has been archived", r.WorkflowID, r.Status))
		return nil
	}
	if expired, err := r.Expired(now); err == nil && expired {
		msg, err := e.expire(r, dryRun)
		if err != nil {
			out.Warnings = append(out.Warnings, err.Error())
			return r
		}
		out.Notices = append(out.Notices, msg)
		*eye = append(*eye, msg)
		if dryRun {
			return r
		}
		return nil
	}
	if !e.interrupted(r, now) {
		return r
	}
	res, acts, err := workflow.Recover(r, now, e.exists, e.actor())
	// The approval to re-present is already the plan's next step; repeating it as a notice
	// only lengthens the report.
	acts = slices.DeleteFunc(acts, func(a workflow.RecoveryAction) bool { return a.Kind == workflow.RecoveredReapproval })
	if err != nil || !res.Changed {
		for _, a := range acts {
			out.Notices = append(out.Notices, a.Text)
		}
		return r
	}
	if dryRun {
		for _, a := range acts {
			out.Notices = append(out.Notices, "would recover: "+a.Text)
		}
		return r
	}
	_, _, cerr := e.change(func(cur *workflow.Record) (workflow.Result, error) {
		if cur == nil || cur.WorkflowID != r.WorkflowID {
			return workflow.Result{Event: workflow.EventNone}, nil
		}
		res, _, err := workflow.Recover(cur, now, e.exists, e.actor())
		return res, err
	}, "recovered after an interruption")
	if cerr != nil {
		out.Warnings = append(out.Warnings, "recovering interrupted tasks failed: "+cerr.Error())
		return r
	}
	for _, a := range acts {
		out.Notices = append(out.Notices, a.Text)
	}
	if fresh, _, err := e.active(); err == nil && fresh != nil {
		return fresh
	}
	return r
}

// interrupted says whether the workflow's running tasks can be taken as interrupted: the
// session that last changed it is not the caller (whose tasks may well be running: a
// resume_check mid-session, a start after /compact) and it has ended or gone quiet. A
// workflow no session owns (changed only by the CLI) counts as interrupted.
func (e *Engine) interrupted(r *workflow.Record, now time.Time) bool {
	o := r.Owner
	if o == nil || o.SessionID == "" {
		return true
	}
	if o.SessionID == e.cfg.SessionID {
		return false
	}
	return e.ownerEnded(r) || !workflow.OwnerLive(r, e.actor(), now, workflow.DefaultLiveWindow)
}

// expire archives an expired workflow (never deletes it) and writes the expiry line.
func (e *Engine) expire(r *workflow.Record, dryRun bool) (string, error) {
	res, err := workflow.Expire(r, e.now())
	if err != nil {
		return "", err
	}
	if dryRun {
		return fmt.Sprintf("workflow %s (%s at %s) has expired (inactive > %s) and would be archived", r.WorkflowID, r.Type, r.State, ttlText(r.TTL)), nil
	}
	if err := e.archiveActive(r, res.Archive, "expired"); err != nil {
		return "", fmt.Errorf("archiving the expired workflow %s failed; it is still in place: %w", r.WorkflowID, err)
	}
	msg := fmt.Sprintf("%s: workflow %s (%s at %s, %q) was archived", res.Log, r.WorkflowID, r.Type, r.State, r.Context)
	if w := e.writeL2(r.WorkflowID, r.Revision+1, res.L2); w != "" {
		msg += "; " + w
	}
	return msg, nil
}

// ExpireTTL expires the active workflow if its TTL has passed (dry run: only says so).
func (e *Engine) ExpireTTL(ctx context.Context, dryRun bool) (*Result, error) {
	r, _, err := e.active()
	if err != nil {
		return nil, err
	}
	if r == nil {
		return &Result{Message: "no active workflow; nothing to expire"}, nil
	}
	expired, err := r.Expired(e.now())
	if err != nil {
		return nil, err
	}
	if !expired || r.Status != workflow.StatusActive {
		at, _ := r.ExpiresAt()
		return &Result{Message: fmt.Sprintf("workflow %s has not expired; it expires at %s (ttl %s)", r.WorkflowID, at.UTC().Format(time.RFC3339), ttlText(r.TTL))}, nil
	}
	msg, err := e.expire(r, dryRun)
	if err != nil {
		return nil, err
	}
	return &Result{Message: msg, Changed: !dryRun}, nil
}

func ttlText(ttl string) string {
	if ttl == "" {
		return "24h"
	}
	return ttl
}

// exists says whether a referenced output exists; relative paths are from the project root.
func (e *Engine) exists(p string) bool {
	if p == "" {
		return false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.root, p)
	}
	_, err := os.Lstat(p)
	return err == nil
}

// milestoneScanCap bounds the last-resort directory scan of the read protocol.
const milestoneScanCap = 20

// scanMilestones is the read protocol's last resort (seed 001): the front matter of
// documentation/milestones/_active/*.md names initiatives in progress. Without a YAML reader
// (a hook binary; internal/hook hands projects with that directory to the cairn binary) the
// files are listed by name only.
func (e *Engine) scanMilestones() []string {
	dir := filepath.Join(e.root, "documentation", "milestones", "_active")
	ents, err := fsx.ReadDirPath(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, ent := range ents {
		if len(names) >= milestoneScanCap {
			break
		}
		if ent.IsDir() || !strings.HasSuffix(ent.Name(), ".md") {
			continue
		}
		data, err := readSmallRegular(filepath.Join(dir, ent.Name()), 64<<10)
		if err != nil {
			continue
		}
		var title, name, status string
		if e.cfg.YAML != nil {
			if title, name, status, err = e.cfg.YAML.MilestoneFrontMatter(data); err != nil {
				continue
			}
		}
		label := strings.TrimSuffix(ent.Name(), ".md")
		if t := firstNonEmpty(title, name); t != "" {
			label += " (" + t + ")"
		}
		if status != "" {
			label += " [" + status + "]"
		}
		names = append(names, label)
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	return []string{"no workflow on record; active milestone files in documentation/milestones/_active: " + strings.Join(names, ", ")}
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func tierName(t workflow.Tier) string {
	switch t {
	case workflow.TierFull:
		return "Full"
	case workflow.TierMinimal:
		return "Minimal"
	case workflow.TierL2Only:
		return "L2-only"
	default:
		return "None"
	}
}

// render builds the fenced resume report.
func (e *Engine) render(out *Resume, plan workflow.Plan) string {
	in := report.Input{
		Tier: out.Tier, WorkflowID: out.WorkflowID, Type: out.Type, Context: out.Context,
		Phase: out.Phase, PhaseStatus: out.PhaseStatus, Age: plan.Age, Completed: out.Completed,
		Next: out.Next, Warnings: out.Warnings, Notices: out.Notices, L2Line: out.L2Line,
		Tool: ToolPrefix + "resume_check", Nonce: report.NewNonce(),
		OpenTasks: out.OpenTasks,
	}
	if out.WorkflowID == "" && out.L2Line == "" {
		in.Next = "" // nothing on record: only warnings or notices, if any, are worth a report
	}
	for _, v := range out.Blocking {
		in.Blocking = append(in.Blocking, report.Violation{Code: v.Code, Severity: v.Severity, Details: v.Details})
	}
	return report.Render(in)
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0:0]
	for _, v := range s {
		if v == "" || seen[v] {
			continue
		}
		seen[v] = true
		out = append(out, v)
	}
	return out
}
