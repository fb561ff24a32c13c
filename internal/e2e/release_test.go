package e2e

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/e2e/mockapi"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/release"
)

// releaseWorld is an install World whose PATH has no Go, with a fresh copy of the committed
// HEAD (no bin/) and its release for this platform served from 127.0.0.1, as GitHub would serve
// it, at CAIRN_DOWNLOAD_URL.
type releaseWorld struct {
	*World
	clone   string
	archive string
	mu      sync.Mutex
	hits    int // downloads of the archive
}

func newReleaseWorld(t *testing.T) *releaseWorld {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("hooks/launch is a POSIX sh script")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: cannot build the release to serve")
	}
	rw := &releaseWorld{World: newInstallWorld(t)}
	rw.clone = filepath.Join(rw.Dir, "clone")
	exportHEAD(t, repoRoot(t), rw.clone)
	var manifest pluginManifest
	readJSON(t, filepath.Join(rw.clone, ".claude-plugin", "plugin.json"), &manifest)

	// The release of exactly these sources, built by the clone's make dist command in a process
	// of its own (in this one, under -race, packing the archive took minutes of CPU). Its
	// checksums replace the committed ones, so this test does not depend on them being current
	// (CI's make dist-check holds them to that).
	dist := filepath.Join(rw.Dir, "dist")
	host := release.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}
	cmd := exec.Command(goBin, "run", "./internal/release/dist", "-out", dist, "-platforms", "host")
	cmd.Dir = rw.clone
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the release: %v\n%s", err, out)
	}
	sums, err := os.ReadFile(filepath.Join(dist, release.ChecksumsName(manifest.Version)))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rw.clone, "release", "checksums.txt"), sums, 0o644); err != nil {
		t.Fatal(err)
	}
	rw.archive = release.ArchiveName(manifest.Version, host)
	data, err := os.ReadFile(filepath.Join(dist, rw.archive))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	path := "/releases/v" + manifest.Version + "/" + rw.archive
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		rw.mu.Lock()
		rw.hits++
		rw.mu.Unlock()
		w.Write(data)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	// No Go anywhere on PATH (the go shim's directory included).
	var dirs []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "go")); err != nil {
			dirs = append(dirs, d)
		}
	}
	rw.Env = append(rw.Env, "PATH="+strings.Join(dirs, string(os.PathListSeparator)),
		"CAIRN_DOWNLOAD_URL=http://"+ln.Addr().String()+"/releases")
	return rw
}

func (rw *releaseWorld) downloads() int {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.hits
}

// startWorkflow records a workflow in the World's project, as an earlier session would have.
func startWorkflow(t *testing.T, w *World) string {
	t.Helper()
	startAt(t, w, time.Now().Add(-time.Minute), engine.StartRequest{Type: "apex", Context: seedContext}).Close()
	return w.readState(t).WorkflowID
}

// Issue 15: with no Go on PATH and the release served from 127.0.0.1, a marketplace-style
// install (no bin/) has its resume report and its tools in the first session: its hooks and
// MCP server download the archive once, check it against release/checksums.txt, install it
// into the plugin's data dir and run it, in the real client.
func TestInstallFromRelease(t *testing.T) {
	t.Parallel()
	rw := newReleaseWorld(t)
	inst, manifest := installFrom(t, rw.World, rw.clone)
	id := startWorkflow(t, rw.World)
	rw.Mock.Script(
		mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains("RELEASE-PROMPT")),
			mockapi.ToolUse(cairnTool("resume_check"), map[string]any{})).Named("resume_check"),
		mockapi.On(afterToolResult, mockapi.Text("resumed")).Named("end of turn"),
	)
	r := rw.runInstalled(t, "RELEASE-PROMPT: where were we?")
	requireOK(t, r)
	requireInstalledLoaded(t, r, inst)
	requireScriptUsed(t, rw.World)
	t.Logf("first session with a download: %v", r.Duration)

	starts := requireHooksOK(t, r, "SessionStart")
	if out := parseHookOutput(t, starts[0]); strings.Contains(out.SystemMessage, "binaries") || out.Specific == nil {
		t.Errorf("the first SessionStart printed %q, want the installed hook's own answer", starts[0].Stdout)
	}
	report := cairnReport(t, r.FirstMain(t))
	if !strings.Contains(report, "workflow: "+id+" (apex)") {
		t.Errorf("the first session's report does not name the workflow %s:\n%s", id, report)
	}
	if got := initTools(r.Init(t)); len(got) != len(cairnTools) {
		t.Errorf("init lists Cairn tools %v, want all %d", got, len(cairnTools))
	}
	if tr := requireToolResultsOK(t, r, 1)[0]; !strings.Contains(tr.Text, id) {
		t.Errorf("resume_check did not name the workflow: %s", tr.Text)
	}
	requireHooksOK(t, r, "Stop")
	if n := rw.downloads(); n != 1 {
		t.Errorf("the archive was downloaded %d times, want once", n)
	}
	if b := goBuilds(t, rw.World); len(b) != 0 {
		t.Errorf("go ran without being on PATH: %v", b)
	}
	dirs, _ := filepath.Glob(filepath.Join(rw.Home, ".claude", "plugins", "data", "*", "bin-"+manifest.Version, ".checksums"))
	if len(dirs) != 1 {
		t.Errorf("plugin data holds %v, want one installed bin-%s", dirs, manifest.Version)
	}
}
