package report

// The open-task lines: the workflow's tasks that are pending or running, among them the
// Claude Code tasks Cairn mirrors (Claude Code keeps its own list per session, so a new
// session starts without it). At most maxItems lines, then "+N more"; they come after the
// next step and the context in the budget, so they never crowd out the position.

// taskLabel starts each line.
const taskLabel = "open task"

// openTasks adds the lines, oldest first.
func (b *budget) openTasks(order int, tasks []string) {
	b.list(order, taskLabel, tasks, capItem)
}
