package readme

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// readDoc returns the repository file rel as a string.
func readDoc(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// section returns the text of the repository file rel under the heading "## name", up to the
// next heading of that level.
func section(t *testing.T, rel, name string) string {
	t.Helper()
	_, sec, ok := strings.Cut(readDoc(t, rel), "\n## "+name+"\n")
	if !ok {
		t.Fatalf("%s has no \"## %s\"", rel, name)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	return sec
}

// stringConsts returns the string constants declared in the non-test Go files of the package
// directory dir: name -> value, where a value is a literal or a sum of literals and constants
// of the same package.
func stringConsts(t *testing.T, dir string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	exprs := map[string]ast.Expr{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						exprs[n.Name] = vs.Values[i]
					}
				}
			}
		}
	}
	var eval func(ast.Expr) (string, bool)
	eval = func(x ast.Expr) (string, bool) {
		switch x := x.(type) {
		case *ast.BasicLit:
			if x.Kind != token.STRING {
				return "", false
			}
			s, err := strconv.Unquote(x.Value)
			return s, err == nil
		case *ast.Ident:
			if v, ok := exprs[x.Name]; ok {
				return eval(v)
			}
		case *ast.BinaryExpr:
			if x.Op == token.ADD {
				a, ok1 := eval(x.X)
				b, ok2 := eval(x.Y)
				return a + b, ok1 && ok2
			}
		}
		return "", false
	}
	out := map[string]string{}
	for n, x := range exprs {
		if v, ok := eval(x); ok {
			out[n] = v
		}
	}
	return out
}

// fenced returns the first ``` block after the line heading in doc.
func fenced(t *testing.T, doc, heading string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("no heading %q", heading)
	}
	_, rest, ok = strings.Cut(rest, "```\n")
	if !ok {
		t.Fatalf("no fenced block after %q", heading)
	}
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("the fenced block after %q is not closed", heading)
	}
	return block
}

// stateFiles are the names Cairn writes in the state directory, its git directory and the
// memory directory, as INTERNALS.md's layout must show them: every store document constant
// (NAME as NAME.json), every file and directory name constant of the packages that write
// there.
func stateFiles(t *testing.T) map[string]string {
	t.Helper()
	root := repoRoot(t)
	files := map[string]string{}
	add := func(pkg, name, shown string) { files[pkg+"."+name] = shown }
	for _, pkg := range []string{"internal/store", "internal/engine", "internal/remote/mirror", "internal/memory", "internal/remote/claimsync", "internal/remote/remotesync"} {
		for name, v := range stringConsts(t, filepath.Join(root, pkg)) {
			switch {
			case strings.HasPrefix(name, "seed") || strings.HasPrefix(name, "Env"):
				// the seeds' files, which Cairn reads and migrates but never writes;
				// environment variables
			case strings.HasSuffix(name, "Lock") && pkg == "internal/remote/claimsync":
				// claims-turn, claims-rebuild: documents whose lock is used, never written;
				// their .lock-NAME files are the layout's .lock-<name>.
				add(pkg, name, ".lock-<name>")
			case strings.HasSuffix(name, "Doc") || name == "Doc" || name == "ReplayIntent":
				add(pkg, name, v+".json")
			case name == "sharingLock":
				add(pkg, name, v) // beside cairn-sharing, in the git directory
			case strings.HasPrefix(v, ".lock-"):
				add(pkg, name, ".lock-<name>")
			case strings.HasSuffix(name, "Dir") || strings.HasSuffix(name, "File") || name == "archiveIndex" ||
				name == "pendingArchive" || name == "workflowName":
				if name == "workflowName" {
					v += ".json" // the snapshot's name without its extension
				}
				add(pkg, name, v)
			}
		}
	}
	return files
}

// TestStateLayoutNamesEveryFile: INTERNALS.md's "Where state lives" shows every file and
// directory Cairn writes (its document, file and directory name constants), so a new file
// cannot go undocumented. It failed on the layout before l2-mark.json, last-ending.json,
// archive/pending.json, .cairn-memory.lock and cairn-sharing (with its lock) were added.
func TestStateLayoutNamesEveryFile(t *testing.T) {
	layout := fenced(t, readDoc(t, "docs/INTERNALS.md"), "## Where state lives")
	files := stateFiles(t)
	for _, want := range []string{"internal/engine.l2MarkDoc", "internal/store.archiveIndex", "internal/remote/mirror.sharingFile", "internal/memory.LockFile"} {
		if _, ok := files[want]; !ok {
			t.Fatalf("the constant %s was not found: the test no longer reads the names it should (found %v)", want, files)
		}
	}
	word := regexp.MustCompile(`[A-Za-z0-9_.<>*/-]+`)
	shown := word.FindAllString(layout, -1)
	for c, name := range files {
		if !slices.ContainsFunc(shown, func(w string) bool {
			return w == name || strings.HasSuffix(w, "/"+name) || strings.HasPrefix(w, name+"/") ||
				strings.HasPrefix(w, strings.TrimSuffix(name, "/")+"/")
		}) {
			t.Errorf("docs/INTERNALS.md's state layout does not show %s (%s)", name, c)
		}
	}
}

// TestArchitectureNamesEveryPackage: ARCHITECTURE.md's map names every Go package of the
// repository, by its path or, for a sub-package listed beside its parent, its last element in
// backticks. It failed before internal/durable/durabletest was added.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	root := repoRoot(t)
	doc := readDoc(t, "docs/ARCHITECTURE.md")
	var pkgs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bin" || d.Name() == "dist") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") {
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			rel = filepath.ToSlash(rel)
			if !slices.Contains(pkgs, rel) {
				pkgs = append(pkgs, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pkgs, "internal/durable/durabletest") || !slices.Contains(pkgs, "internal/engine") {
		t.Fatalf("the walk found %v: not the repository's packages", pkgs)
	}
	for _, p := range pkgs {
		switch {
		case p == ".":
			if !strings.Contains(doc, "package `cairn`") {
				t.Error("docs/ARCHITECTURE.md does not name the root package `cairn`")
			}
		case strings.Contains(doc, p):
		case strings.Contains(doc, "`"+filepath.Base(p)+"`"):
		default:
			t.Errorf("docs/ARCHITECTURE.md does not name the package %s", p)
		}
	}
}

// TestInternalsNamesEveryDependency: INTERNALS.md's "Dependencies, and why" has a row for
// every module go.mod requires directly and every tool it pins. It failed before
// github.com/spf13/cobra had one.
func TestInternalsNamesEveryDependency(t *testing.T) {
	gomod := readDoc(t, "go.mod")
	table := section(t, "docs/INTERNALS.md", "Dependencies, and why")
	var mods []string
	inRequire := false
	for _, l := range strings.Split(gomod, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "require (":
			inRequire = true
		case l == ")":
			inRequire = false
		case inRequire && l != "" && !strings.Contains(l, "// indirect"):
			mods = append(mods, strings.Fields(l)[0])
		case strings.HasPrefix(l, "tool "):
			// honnef.co/go/tools/cmd/staticcheck: the module is honnef.co/go/tools
			mods = append(mods, strings.TrimSuffix(strings.Fields(l)[1], "/cmd/staticcheck"))
		}
	}
	if !slices.Contains(mods, "github.com/mark3labs/mcp-go") {
		t.Fatalf("read %v from go.mod: not its requirements", mods)
	}
	for _, m := range mods {
		if !strings.Contains(table, "`"+m+"`") {
			t.Errorf("docs/INTERNALS.md's dependency table has no row for %s, which go.mod requires", m)
		}
	}
}

// internalEnv are the CAIRN_ variables the README leaves out on purpose: Cairn's launcher
// sets them for its own hooks (CAIRN_LAUNCH_*) and for the agent's cairn (CAIRN_PLUGIN_ROOT),
// or only tests and make use them.
var internalEnv = []string{"CAIRN_LAUNCH_ROOT", "CAIRN_LAUNCH_BIN", "CAIRN_LAUNCH_VERIFY", "CAIRN_LAUNCH_RAN", "CAIRN_PLUGIN_ROOT", "CAIRN_UPDATE_COMPAT", "CAIRN_CLAUDE_BIN"}

// TestReadmeNamesEveryVariable: every CAIRN_ variable the shipped code, hooks/install or
// hooks/launch reads is in the README (or is one of internalEnv), and every one the README
// names is read somewhere. It failed before CAIRN_HOOK_DEADLINE was in the README.
func TestReadmeNamesEveryVariable(t *testing.T) {
	root := repoRoot(t)
	readme := readDoc(t, "README.md")
	envName := regexp.MustCompile(`CAIRN_[A-Z0-9_]*[A-Z0-9]`)
	read := map[string]string{}
	scan := func(p string) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		for _, v := range envName.FindAllString(string(data), -1) {
			read[v] = rel
		}
	}
	scan(filepath.Join(root, "hooks", "install"))
	scan(filepath.Join(root, "hooks", "launch"))
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "e2e", "hooktest", "plugintest", "readme", "compattest", "bin", "dist":
				return filepath.SkipDir
			}
			if p != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") && !strings.Contains(p, "test"+string(filepath.Separator)) {
			scan(p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if read["CAIRN_STATE_DIR"] == "" || read["CAIRN_DOWNLOAD_URL"] == "" {
		t.Fatalf("found %v: not the variables the code reads", read)
	}
	named := envName.FindAllString(readme, -1)
	for v, where := range read {
		if !slices.Contains(internalEnv, v) && !slices.Contains(named, v) {
			t.Errorf("%s reads %s, which the README does not name", where, v)
		}
	}
	for _, v := range named {
		if _, ok := read[v]; !ok {
			t.Errorf("the README names %s, which no shipped code reads", v)
		}
	}
}

// TestInternalsFindsMemoryAsTheCodeDoes: "Finding auto-memory" names every environment
// variable internal/memory reads to find or switch off the directory. It failed before
// CLAUDE_CODE_REMOTE_MEMORY_DIR, CLAUDE_CODE_SIMPLE, CLAUDE_CODE_SAFE_MODE and
// CLAUDE_CODE_REMOTE were named.
func TestInternalsFindsMemoryAsTheCodeDoes(t *testing.T) {
	sec := section(t, "docs/INTERNALS.md", "Finding auto-memory")
	n := 0
	for name, v := range stringConsts(t, filepath.Join(repoRoot(t), "internal", "memory")) {
		if !strings.HasPrefix(name, "Env") {
			continue
		}
		n++
		if !strings.Contains(sec, "`"+v+"`") && !strings.Contains(sec, "`"+v+"=") {
			t.Errorf("docs/INTERNALS.md's \"Finding auto-memory\" does not name %s (memory.%s)", v, name)
		}
	}
	if n < 5 {
		t.Fatalf("found %d memory.Env constants: the test no longer reads them", n)
	}
}

// TestReadmeNamesEveryConfigKey: the README's Configuration names every key of
// .claude/cairn/config.json the engine reads (engine.fileConfig's JSON names).
func TestReadmeNamesEveryConfigKey(t *testing.T) {
	sec := section(t, "README.md", "Configuration")
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(repoRoot(t), "internal", "engine", "config.go"), nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "fileConfig" {
			return true
		}
		for _, fld := range ts.Type.(*ast.StructType).Fields.List {
			if fld.Tag == nil {
				continue
			}
			tag, _ := strconv.Unquote(fld.Tag.Value)
			if _, v, ok := strings.Cut(tag, `json:"`); ok {
				name, _, _ := strings.Cut(strings.Split(v, `"`)[0], ",")
				keys = append(keys, name)
			}
		}
		return false
	})
	if len(keys) < 3 {
		t.Fatalf("read the config keys %q from engine.fileConfig: not its keys", keys)
	}
	for _, k := range keys {
		if !strings.Contains(sec, "`"+k) {
			t.Errorf("the README's Configuration does not name the config.json key %s", k)
		}
	}
}

// TestDocsNameTestsThatExist: every Test, Benchmark or Fuzz function the README, docs/ and the
// skill name (as the evidence for a claim or a figure) is one a _test.go file declares, so a
// renamed test cannot leave a figure pointing nowhere. Checked to fail with a name misspelt.
func TestDocsNameTestsThatExist(t *testing.T) {
	root := repoRoot(t)
	declared := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)[A-Z][A-Za-z0-9_]*)\(`)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" || d.Name() == "dist") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, "_test.go") {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range decl.FindAllStringSubmatch(string(data), -1) {
				declared[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !declared["TestDocsNameTestsThatExist"] {
		t.Fatal("the walk did not find this test's own declaration")
	}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	docs = append(docs, filepath.Join(root, "README.md"), filepath.Join(root, "skills", "cairn", "SKILL.md"))
	named := regexp.MustCompile(`\b(?:Test|Benchmark|Fuzz)[A-Z][A-Za-z0-9_]*`)
	n := 0
	for _, p := range docs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		for _, name := range named.FindAllString(string(data), -1) {
			n++
			if !declared[name] {
				t.Errorf("%s names %s, which no _test.go declares", rel, name)
			}
		}
	}
	if n < 5 {
		t.Fatalf("the docs name %d tests: the pattern or the docs changed", n)
	}
}

// adapterStoreUse finds, in the adapters' non-test files (internal/cli, internal/mcptools,
// internal/hook), each store error they test (store.ErrX, *store.XError) and each file that
// opens the store itself (store.Open, an engine's OpenStore), by the file's path under
// internal/.
func adapterStoreUse(t *testing.T) (errs, opens []string) {
	t.Helper()
	storeErr := regexp.MustCompile(`store\.(Err[A-Z]\w*|[A-Z]\w*Error)\b`)
	open := regexp.MustCompile(`store\.Open\(|\.OpenStore\(`)
	for _, dir := range []string{"cli", "mcptools", "hook"} {
		files, err := filepath.Glob(filepath.Join(repoRoot(t), "internal", dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in internal/%s: %v", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range storeErr.FindAllStringSubmatch(string(data), -1) {
				if !slices.Contains(errs, m[1]) {
					errs = append(errs, m[1])
				}
			}
			if open.Match(data) {
				opens = append(opens, dir+"/"+filepath.Base(f))
			}
		}
	}
	return errs, opens
}

// TestArchitectureNamesAdaptersStoreUse: "Where a change goes" says adapters map errors with
// engine.Classify and open the store only beside the engine; each store error an adapter tests
// and each adapter file that opens the store is named there. It failed when the text said
// load_checkpoint's ErrNotFound was the one exception (of six) and named three files of five.
func TestArchitectureNamesAdaptersStoreUse(t *testing.T) {
	doc := strings.Join(strings.Fields(section(t, "docs/ARCHITECTURE.md", "Where a change goes")), " ")
	errs, opens := adapterStoreUse(t)
	if !slices.Contains(errs, "ErrNotFound") || !slices.Contains(opens, "mcptools/server.go") {
		t.Fatalf("found errors %v and opens %v: the patterns or the adapters changed", errs, opens)
	}
	for _, e := range errs {
		if !strings.Contains(doc, e+"`") {
			t.Errorf("docs/ARCHITECTURE.md does not name store.%s, which an adapter tests", e)
		}
	}
	for _, f := range opens {
		if !strings.Contains(doc, "`"+f+"`") {
			t.Errorf("docs/ARCHITECTURE.md does not name %s, which opens the store itself", f)
		}
	}
}
