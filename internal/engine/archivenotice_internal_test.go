package engine

import (
	"slices"
	"testing"

	"github.com/cairn-dev/cairn/internal/store"
)

// TestArchiveNoticesReachTheReader: what finishing an archive did besides (a directory left in
// archive/, a journal kept in quarantine/) reaches the model and the person: in a Result's
// warnings, which the MCP tools return and the CLI prints, and in a resume's notices. Before,
// the engine read only Pruned and PruneErr and dropped them.
func TestArchiveNoticesReachTheReader(t *testing.T) {
	t.Parallel()
	left := store.Notice{Kind: "archive-left", Path: "archive/x", Message: "archive/x was left as it is"}
	kept := store.Notice{Kind: "quarantined", Path: "quarantine/j", Message: "the journal is kept in quarantine/j"}
	info := store.ArchiveInfo{Dir: "d", Notices: []store.Notice{left, kept}}

	var res Result
	res.retention(info)
	for _, n := range info.Notices {
		if !slices.Contains(res.Warnings, n.Message) {
			t.Errorf("result warnings %q lack %q", res.Warnings, n.Message)
		}
	}
	var out Resume
	pruneWarning(&out, info)
	for _, n := range info.Notices {
		if !slices.Contains(out.Notices, n.Message) {
			t.Errorf("resume notices %q lack %q", out.Notices, n.Message)
		}
	}
}
