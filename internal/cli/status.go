package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

func runStatus(a *app, args []string) error {
	if _, err := a.parse(a.flags(), args, 0, 0); err != nil {
		return err
	}
	e, err := a.engine()
	if err != nil {
		return err
	}
	r, err := e.Resume(a.ctx, engine.ResumeOptions{})
	if err != nil {
		return err
	}
	e.Definitions() // load them, so broken definition files are reported here
	a.warn(e.Warnings()...)
	if a.json {
		return a.printJSON(r)
	}
	writeStatus(a.stdout, r)
	if !e.InGit() {
		fmt.Fprintf(a.stdout, "Project:    %s (no git repository found: the launch directory is the project root)\n", clean(e.ProjectRoot()))
	}
	return nil
}

// writeStatus renders the read protocol's answer for a person.
func writeStatus(w io.Writer, r *engine.Resume) {
	if r.WorkflowID == "" {
		fmt.Fprintln(w, "No active workflow.")
		if r.L2Line != "" {
			fmt.Fprintf(w, "Last memory line: %s\n", clean(r.L2Line))
		}
	} else {
		fmt.Fprintf(w, "Workflow:   %s (%s)\n", clean(r.WorkflowID), clean(r.Type))
		fmt.Fprintf(w, "Context:    %s\n", clean(r.Context))
		phase := clean(r.Phase)
		if r.PhaseStatus != "" {
			phase += " (" + clean(r.PhaseStatus) + ")"
		}
		fmt.Fprintf(w, "Phase:      %s, last change %s ago\n", phase, ago(time.Duration(r.AgeSeconds)*time.Second))
		if len(r.Completed) > 0 {
			fmt.Fprintf(w, "Completed:  %s\n", clean(strings.Join(r.Completed, ", ")))
		}
		if len(r.Allowed) > 0 {
			fmt.Fprintf(w, "Allowed:    %s\n", clean(strings.Join(r.Allowed, ", ")))
		}
		fmt.Fprintf(w, "State:      %s\n", clean(r.Tier))
	}
	if r.Next != "" {
		fmt.Fprintf(w, "Next:       %s\n", clean(r.Next))
	}
	list(w, "Blocking violations", len(r.Blocking), func(i int) string {
		v := r.Blocking[i]
		return fmt.Sprintf("%s %s: %s", v.Code, v.Severity, v.Details)
	})
	list(w, "Warnings", len(r.Warnings), func(i int) string { return r.Warnings[i] })
	list(w, "Notices", len(r.Notices), func(i int) string { return r.Notices[i] })
}

// list prints a titled bullet list when it has items.
func list(w io.Writer, title string, n int, item func(int) string) {
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "%s:\n", title)
	for i := range n {
		fmt.Fprintf(w, "  - %s\n", clean(item(i)))
	}
}
