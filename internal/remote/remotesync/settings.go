package remotesync

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-dev/cairn/internal/store"
)

// SettingsDoc is the store document that says whether and where this project syncs.
const SettingsDoc = "remote"

// Settings is this project's remote sync configuration, kept in the state directory (per
// machine: each clone opts in on its own).
type Settings struct {
	Enabled  bool      `json:"enabled"`
	Remote   string    `json:"remote"`             // a git remote name, "origin" by default
	Layout   string    `json:"layout"`             // the gitremote.Layout the host accepted
	LastSync time.Time `json:"last_sync,omitzero"` // the end of the last successful sync
}

// LoadSettings reads the settings; absent means off.
func LoadSettings(st *store.Store) (Settings, error) {
	var s Settings
	doc, err := st.Read(SettingsDoc)
	if errors.Is(err, store.ErrNotFound) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(doc, &s); err != nil {
		return s, fmt.Errorf("the remote settings (%s) are not readable: run cairn remote enable again: %w", SettingsDoc, err)
	}
	return s, nil
}

// SaveSettings writes the settings atomically.
func SaveSettings(st *store.Store, s Settings) error {
	doc, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return st.Write(SettingsDoc, doc)
}
