package remotesync

import (
	"github.com/cairn-dev/cairn/internal/remote/mirror"
	"github.com/cairn-dev/cairn/internal/store"
)

// SettingsDoc is the store document that says whether and where this project syncs.
const SettingsDoc = mirror.Doc

// Settings is this project's remote sync configuration, kept in the state directory (per
// machine: each clone opts in on its own). It lives in package mirror, which the hooks read.
type Settings = mirror.Settings

// LoadSettings reads the settings; absent means off.
func LoadSettings(st *store.Store) (Settings, error) { return mirror.Load(st) }

// SaveSettings writes the settings atomically.
func SaveSettings(st *store.Store, s Settings) error { return mirror.Save(st, s) }
