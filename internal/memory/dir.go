package memory

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/project"
)

// Environment variables read by Dir, in the order they are consulted.
const (
	EnvCairnMemoryDir  = "CAIRN_MEMORY_DIR"                   // Cairn's own override, first
	EnvCoworkOverride  = "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE" // Claude Code's override, absolute only
	EnvConfigDir       = "CLAUDE_CONFIG_DIR"                  // moves ~/.claude
	EnvRemoteMemoryDir = "CLAUDE_CODE_REMOTE_MEMORY_DIR"      // replaces the config dir as the projects base
	EnvDisable         = "CLAUDE_CODE_DISABLE_AUTO_MEMORY"    // 1/true/yes/on: off; 0/false/no/off: forced on
	EnvSimple          = "CLAUDE_CODE_SIMPLE"                 // set by --bare: auto-memory off
	EnvSafeMode        = "CLAUDE_CODE_SAFE_MODE"              // --safe-mode: auto-memory off
	EnvRemote          = "CLAUDE_CODE_REMOTE"                 // remote sessions: off unless a memory dir is given
)

// maxSanitized is where Claude Code cuts a sanitised project key and appends a hash.
const maxSanitized = 200

// maxSettingsFile bounds a settings file read: they are small JSON documents.
const maxSettingsFile = 1 << 20

// Env is what Dir looks at. Zero fields take safe defaults: a nil Getenv sees an empty
// environment, an empty Home is taken from HOME (USERPROFILE on Windows), an empty
// ManagedSettings is the platform's managed-settings.json.
type Env struct {
	Getenv          func(string) string
	WorkDir         string // the process's working directory, absolute
	Home            string
	ManagedSettings string // path of the managed (policy) settings file
	// Project is the project found from WorkDir already (project.Find), if the caller has it:
	// its git common root is not looked for again.
	Project *project.Found
	// EvenOff names the directory where auto-memory is switched off too (cairn uninstall:
	// what Cairn wrote before it was switched off is there still, and loaded once it is on).
	EvenOff bool
}

// commonRoot is project.GitCommonRoot(env.Getenv, wd), from env.Project when it is that
// launch directory's.
func (e Env) commonRoot(wd string) (string, error) {
	if f := e.Project; f != nil {
		if l, err := project.LaunchDir(e.Getenv, wd); err == nil && l == f.Launch {
			return f.CommonRoot(), nil
		}
	}
	return project.GitCommonRoot(e.Getenv, wd)
}

func (e Env) getenv(k string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(k)
}

func (e Env) home() string {
	return cmp.Or(e.Home, e.getenv("HOME"), e.getenv("USERPROFILE"))
}

// Location is where L2 lives for this project, or why it is off.
type Location struct {
	Dir      string // the memory directory, absolute and clean; "" when Disabled
	Source   string // what chose Dir: an env var's name, "autoMemoryDirectory in <file>", or "default"
	Key      string // the sanitised project key under <config>/projects, for the default
	Disabled bool   // auto-memory is off: write nothing there
	Reason   string // why it is off, for the degradation tier
	// Refused says Disabled is Cairn's refusal of a repository's autoMemoryDirectory, not
	// auto-memory switched off: Claude Code still writes memory there.
	Refused bool
	// Shared says Dir is named by a setting every project reads (autoMemoryDirectory in the
	// user's or managed settings): other projects' lines may be in it.
	Shared bool
}

// Dir finds the auto-memory directory exactly as Claude Code does, or says it is disabled.
// Order: CAIRN_MEMORY_DIR (Cairn's; absolute, "~/" or relative to WorkDir), then
// CLAUDE_COWORK_MEMORY_PATH_OVERRIDE (absolute only), then the autoMemoryDirectory setting
// (managed, local, project, then user settings; absolute or "~/"), then the default
// <config>/projects/<SanitizePath(git common root)>/memory with config = CLAUDE_CONFIG_DIR or
// ~/.claude (CLAUDE_CODE_REMOTE_MEMORY_DIR replaces the config dir there), the root found
// from the physical working directory. An override
// Claude Code would refuse (relative, "~/..", a UNC path, NUL) is skipped as Claude Code skips
// it. Whether auto-memory is on is decided first (unless env.EvenOff) and applies to every
// override. An error means the directory cannot be named at all (no home and no config dir,
// a relative one, no usable working directory); callers treat it as L2 unavailable.
func Dir(env Env) (Location, error) {
	launch, err := project.LaunchDir(env.Getenv, env.WorkDir)
	if err != nil {
		return Location{}, err
	}
	from, given := EnvConfigDir, env.getenv(EnvConfigDir)
	if given == "" {
		from, given = "HOME", env.home()
	}
	if given == "" {
		return Location{}, fmt.Errorf("finding the auto-memory directory: neither HOME nor %s is set", EnvConfigDir)
	}
	configDir := project.ConfigDir(env.getenv, env.home())
	settings := loadSettings(env, configDir, launch)
	if env.getenv(project.EnvProjectDir) == "" {
		env = settingsEnv(env, settings)
	}

	if off, reason := disabled(env, settings); off && !env.EvenOff {
		return Location{Disabled: true, Reason: reason}, nil
	}

	if v := env.getenv(EnvCairnMemoryDir); v != "" {
		if d, ok := overridePath(v, env.home(), true); ok {
			return Location{Dir: d, Source: EnvCairnMemoryDir}, nil
		}
		relative := !filepath.IsAbs(v) && !strings.HasPrefix(v, "~") && !strings.ContainsRune(v, 0) &&
			!strings.HasPrefix(v, `\`) && !strings.HasPrefix(v, "/")
		if relative && filepath.IsAbs(env.WorkDir) {
			return Location{Dir: filepath.Join(env.WorkDir, v), Source: EnvCairnMemoryDir}, nil
		}
		return Location{}, fmt.Errorf("finding the auto-memory directory: %s=%q is not a usable directory (absolute, ~/..., or relative to a known working directory); unset it or give an absolute path", EnvCairnMemoryDir, v)
	}
	if v := env.getenv(EnvCoworkOverride); v != "" {
		if d, ok := overridePath(v, env.home(), false); ok {
			return Location{Dir: d, Source: EnvCoworkOverride}, nil
		}
	}
	for _, s := range settings {
		if s.dir == nil {
			continue
		}
		// The first source that sets it decides; an unusable value falls to the default,
		// as in Claude Code, rather than to a lower source.
		if d, ok := overridePath(*s.dir, env.home(), true); ok {
			// A repository's own settings may not send Cairn's writes anywhere: only into
			// the project (no link on the way) or the user's Claude directory.
			if s.project && !projectMayUse(d, configDir, launch, env) {
				return Location{Disabled: true, Refused: true, Reason: "autoMemoryDirectory in " + s.path + " points outside the project and the Claude directory; Cairn does not write memory there (set it in your user settings, or CAIRN_MEMORY_DIR, to use that directory)"}, nil
			}
			return Location{Dir: d, Source: "autoMemoryDirectory in " + s.path, Shared: !s.project}, nil
		}
		break
	}

	// Claude Code names the project by its physical path, which CLAUDE_PROJECT_DIR holds; a
	// working directory from os.Getwd, which prefers $PWD, may be a path through a symlink
	// (cairn run in a shell that cd'd through one).
	wd := env.WorkDir
	if env.getenv(project.EnvProjectDir) == "" {
		if r, err := filepath.EvalSymlinks(wd); err == nil {
			wd = r
		}
	}
	root, err := env.commonRoot(wd)
	if err != nil {
		return Location{}, err
	}
	base := configDir
	if v := env.getenv(EnvRemoteMemoryDir); v != "" {
		base, from, given = v, EnvRemoteMemoryDir, v
	}
	if !filepath.IsAbs(base) {
		// Relative, it would name another directory for each process's working directory
		// (configDir is "" then).
		return Location{}, fmt.Errorf("finding the auto-memory directory: %s=%q is not an absolute path; set it to one", from, given)
	}
	key := SanitizePath(root)
	return Location{Dir: filepath.Join(base, "projects", key, "memory"), Source: "default", Key: key}, nil
}

// SanitizePath turns a path into Claude Code's project key: every UTF-16 code unit outside
// [A-Za-z0-9] becomes "-" (so a character outside the Basic Multilingual Plane becomes
// "--"), case kept; a key over 200 characters is cut to 200 and suffixed with "-" and the
// base-36 absolute value of a 32-bit string hash of the original path (h = h*31 + unit,
// wrapping, over its UTF-16 code units), as the 2.1.x CLI does.
func SanitizePath(p string) string {
	units := utf16.Encode([]rune(p))
	var b strings.Builder
	b.Grow(len(units))
	for _, u := range units {
		if u < 0x80 && isAlnum(byte(u)) {
			b.WriteByte(byte(u))
		} else {
			b.WriteByte('-')
		}
	}
	s := b.String()
	if len(s) <= maxSanitized {
		return s
	}
	return s[:maxSanitized] + "-" + pathHash(units)
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// pathHash is Claude Code's: h = (h<<5) - h + unit as a wrapping int32, then
// Math.abs(h).toString(36). Math.abs of the smallest int32 is 2^31, so the absolute value
// is taken in 64 bits.
func pathHash(units []uint16) string {
	var h int32
	for _, u := range units {
		h = (h << 5) - h + int32(u)
	}
	return pathHashAbs(h)
}

func pathHashAbs(h int32) string { return strconv.FormatInt(max(int64(h), -int64(h)), 36) }

// overridePath validates and normalises a directory override the way Claude Code does: with
// tilde allowed, "~/x" is taken under home (but "~/", "~/.." and escapes are refused); the
// result must be absolute, at least 3 characters, not a bare drive, not a UNC path and free
// of NUL. The returned path is clean, without a trailing separator.
func overridePath(v, home string, tilde bool) (string, bool) {
	p := v
	if tilde && (strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`)) {
		rest := filepath.Clean(filepath.FromSlash(p[2:]))
		if home == "" || rest == "." || rest == ".." || strings.HasPrefix(rest, ".."+string(filepath.Separator)) || filepath.IsAbs(rest) {
			return "", false
		}
		p = filepath.Join(home, rest)
	}
	if strings.ContainsRune(p, 0) {
		return "", false
	}
	if len(p) >= 2 && (p[0] == '/' || p[0] == '\\') && (p[1] == '/' || p[1] == '\\') {
		return "", false // UNC or network path
	}
	if !filepath.IsAbs(p) {
		return "", false
	}
	p = filepath.Clean(p)
	if len(p) < 3 || (len(p) == 3 && p[1] == ':') {
		return "", false // "/", "C:\" and the like
	}
	return p, true
}

// settingsSource is one settings file's say on auto-memory.
type settingsSource struct {
	path    string
	dir     *string
	enabled *bool
	env     json.RawMessage // its env object, undecoded: only cairn outside Claude Code reads it
	project bool            // a settings file of the repository (.claude/settings*.json), not the user's
}

// settingsEnv is env with the switches Dir reads taken first from the settings files' env
// objects, the highest source that sets one winning over the process's own value, as Claude
// Code applies them to its own environment: for cairn in a shell. Under Claude Code
// (CLAUDE_PROJECT_DIR set) the environment already is what it applied.
func settingsEnv(env Env, settings []settingsSource) Env {
	var envs []map[string]json.RawMessage
	for _, s := range settings {
		var m map[string]json.RawMessage
		if json.Unmarshal(s.env, &m) == nil && len(m) > 0 {
			envs = append(envs, m)
		}
	}
	if len(envs) == 0 {
		return env
	}
	get := env.getenv
	env.Getenv = func(k string) string {
		switch k {
		case EnvCairnMemoryDir, EnvCoworkOverride, EnvRemoteMemoryDir, EnvDisable, EnvSimple, EnvSafeMode, EnvRemote:
			for _, m := range envs {
				raw, ok := m[k]
				if !ok || string(raw) == "null" {
					continue
				}
				var v string
				if json.Unmarshal(raw, &v) != nil {
					v = string(raw) // a number or a boolean, as Claude Code turns it into a string
				}
				return v
			}
		}
		return get(k)
	}
	return env
}

// projectMayUse reports whether a memory directory named by a repository's settings lies in
// the user's Claude directory, or inside the project with no symlink between the project
// root and it.
func projectMayUse(d, configDir, launch string, env Env) bool {
	if durable.Beneath(filepath.Clean(configDir), d) {
		return true
	}
	roots := []string{launch}
	if r, err := env.commonRoot(env.WorkDir); err == nil {
		roots = append(roots, r)
	}
	return slices.ContainsFunc(roots, func(r string) bool {
		return r != "" && durable.Beneath(r, d) && durable.CheckBeneath(r, d) == nil
	})
}

// loadSettings reads the settings files in Claude Code's precedence, highest first: managed
// (policy), local project, shared project, user. Project files live under the launch
// directory (Claude Code's project settings are keyed on where it was started). Missing or
// malformed files are skipped, as Claude Code skips them. No configDir (project.ConfigDir's ""
// for a relative one) names no user's file: none is read.
func loadSettings(env Env, configDir, launch string) []settingsSource {
	paths := []string{
		cmp.Or(env.ManagedSettings, defaultManagedSettings),
		filepath.Join(launch, ".claude", "settings.local.json"),
		filepath.Join(launch, ".claude", "settings.json"),
	}
	if configDir != "" {
		paths = append(paths, filepath.Join(configDir, "settings.json"))
	}
	var out []settingsSource
	for _, p := range paths {
		data, err := durable.ReadPath(p, maxSettingsFile, true)
		if err != nil {
			continue
		}
		if s, ok := parseSettings(p, data); ok {
			s.project = strings.HasPrefix(p, filepath.Join(launch, ".claude")+string(filepath.Separator))
			out = append(out, s)
		}
	}
	return out
}

// parseSettings reads a settings file's autoMemoryDirectory and autoMemoryEnabled, reporting
// false when data is not a JSON object (null counts as one with nothing set). null means
// unset, as Claude Code's "!= null" test has it; a value of another type is ignored.
func parseSettings(p string, data []byte) (settingsSource, bool) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return settingsSource{}, false
	}
	return settingsSource{path: p, dir: setting[string](doc, "autoMemoryDirectory"), enabled: setting[bool](doc, "autoMemoryEnabled"), env: doc["env"]}, true
}

// setting is a settings file's value for key, nil when it is missing, null or of another type.
func setting[T any](doc map[string]json.RawMessage, key string) *T {
	var v T
	if raw, ok := doc[key]; ok && string(raw) != "null" && json.Unmarshal(raw, &v) == nil {
		return &v
	}
	return nil
}

// disabled mirrors Claude Code's switch: --bare and --safe-mode turn auto-memory off;
// CLAUDE_CODE_DISABLE_AUTO_MEMORY truthy turns it off and falsy forces it on over the
// settings; a remote session without a memory dir has none; else autoMemoryEnabled from the
// highest settings source that sets it, on by default.
func disabled(env Env, settings []settingsSource) (bool, string) {
	if Truthy(env.getenv(EnvSimple)) {
		return true, "auto-memory is off in --bare mode (" + EnvSimple + ")"
	}
	if Truthy(env.getenv(EnvSafeMode)) {
		return true, "auto-memory is off in safe mode (" + EnvSafeMode + ")"
	}
	switch v := env.getenv(EnvDisable); {
	case Truthy(v):
		return true, "auto-memory is disabled by " + EnvDisable + "=" + v
	case Falsy(v):
		return false, ""
	}
	if Truthy(env.getenv(EnvRemote)) && env.getenv(EnvRemoteMemoryDir) == "" && env.getenv(EnvCoworkOverride) == "" {
		return true, "auto-memory is off in a remote session without " + EnvRemoteMemoryDir
	}
	if i := slices.IndexFunc(settings, func(s settingsSource) bool { return s.enabled != nil }); i >= 0 && !*settings[i].enabled {
		return true, "auto-memory is disabled by autoMemoryEnabled: false in " + settings[i].path
	}
	return false, ""
}

// Truthy and Falsy read a boolean environment variable as Claude Code does: 1, true, yes or
// on is true, 0, false, no or off false, in any case; anything else is neither.
func Truthy(v string) bool {
	return slices.Contains([]string{"1", "true", "yes", "on"}, strings.ToLower(strings.TrimSpace(v)))
}

func Falsy(v string) bool {
	return slices.Contains([]string{"0", "false", "no", "off"}, strings.ToLower(strings.TrimSpace(v)))
}
