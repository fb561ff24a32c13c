// Package mirror is what this clone knows of its remote without asking it: whether sharing is
// on, against which remote, and what the last sync left (when, which workflow, the remote's
// head), and how many of this clone's task claims no sync has confirmed yet. Each sync records
// it through the store; the hooks and cairn remote status read it.
// Nothing here starts git or opens a connection, so the hooks may link it.
package mirror

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/report"
	"github.com/cairn-dev/cairn/internal/store"
)

// Doc is the store document that holds the Settings.
const Doc = "remote"

// ClaimsDoc is the store document that holds this clone's task claims (package claimsync); the
// mirror reads only its Unconfirmed part.
const ClaimsDoc = "claims"

// Unconfirmed is the part of the claims document (ClaimsDoc) that says which tasks this clone
// set running while the remote was out of reach: the next sync confirms or undoes each claim.
// Package claimsync writes it, embedded in its document, so there is one schema.
type Unconfirmed struct {
	Workflow string               `json:"workflow_id,omitempty"` // the workflow the claims are about
	Pending  map[string]time.Time `json:"pending,omitempty"`     // task id: when it was set running here
}

// Settings is this project's remote sync configuration and the mirror's state, kept in the
// state directory (per machine: each clone opts in on its own).
type Settings struct {
	Enabled  bool      `json:"enabled"`
	Remote   string    `json:"remote"`             // a git remote name, "origin" by default
	Layout   string    `json:"layout"`             // the gitremote.Layout the host accepted
	LastSync time.Time `json:"last_sync,omitzero"` // the end of the last successful sync
	// Workflow and Mirrored are the workflow the last sync was about and the remote's head
	// for it then: what the remote holds, as far as this clone knows.
	Workflow string `json:"workflow_id,omitempty"`
	Mirrored int64  `json:"remote_revision,omitempty"`

	// claimsFor and unconfirmed are read from ClaimsDoc by Load, not stored here: the workflow
	// the claims are about and how many of its claims no sync has confirmed yet.
	claimsFor   string
	unconfirmed int
}

// Load reads the settings; absent means off. With sharing on it also counts the claims not
// yet confirmed (ClaimsDoc), for Shared; a damaged claims document counts none: the next task
// call or sync moves it to quarantine/ and rebuilds it (package claimsync).
func Load(st *store.Store) (Settings, error) {
	var s Settings
	if found, err := st.ReadJSON(Doc, &s); found && err != nil {
		return s, fmt.Errorf("the remote settings (%s) are not readable: run cairn remote enable again: %w", Doc, err)
	} else if err != nil {
		return s, err
	}
	if s.Enabled {
		if !remoteName(s.Remote) { // never repeated: an address may hold a token
			return s, fmt.Errorf("the remote settings (%s) name an address or a path rather than one of this project's git remotes, so nothing is shared: run cairn remote enable [REMOTE]", Doc)
		}
		var u Unconfirmed
		if _, err := st.ReadJSON(ClaimsDoc, &u); err == nil {
			s.claimsFor, s.unconfirmed = u.Workflow, len(u.Pending)
		}
	}
	return s, nil
}

// remoteName reports whether r has the shape of a git remote's name, the only thing cairn
// remote enable stores: settings planted in a repository's state directory, or edited, could
// otherwise hold an address or a path, which git would push every sync to without anyone
// having enabled it. Names cannot hold ':' or '\' (addresses, ext::, Windows paths) nor start
// with '/' or '.' (paths).
func remoteName(r string) bool {
	if r == "" || r[0] == '-' || r[0] == '.' || r[0] == '/' || strings.Contains(r, "..") {
		return false
	}
	for i := 0; i < len(r); i++ {
		if c := r[i]; c == ':' || c == '\\' || c <= ' ' || c == 0x7f {
			return false
		}
	}
	return true
}

// Save writes the settings atomically.
func Save(st *store.Store, s Settings) error {
	doc, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return st.Write(Doc, doc)
}

// Synced records a successful sync against remote, under the store's lock so that a remote
// enable or disable meanwhile is kept: workflow is the one synced ("" when none) and head the
// remote's revision of it afterwards.
func Synced(st *store.Store, remote, workflow string, head int64, at time.Time) error {
	_, err := st.Update(Doc, func(cur []byte) ([]byte, error) {
		var s Settings
		if cur != nil {
			if err := json.Unmarshal(cur, &s); err != nil {
				return nil, fmt.Errorf("the remote settings (%s) are not readable: run cairn remote enable again: %w", Doc, err)
			}
		}
		if s.Remote != remote {
			return nil, errors.New("the remote settings changed during the sync: its result was not recorded")
		}
		s.LastSync, s.Workflow, s.Mirrored = at.UTC(), workflow, head
		return json.Marshal(s)
	})
	return err
}

// Shared is s's view of the active workflow id at local revision rev, for the report line
// (report.SharedLine) at time now; nil when sharing is off. A workflow other than the one last
// synced counts as wholly unpushed. The claims not yet confirmed are counted for id only.
func Shared(s Settings, id string, rev int64, now time.Time) *report.Shared {
	if !s.Enabled {
		return nil
	}
	out := &report.Shared{Remote: s.Remote, Never: s.LastSync.IsZero(), Unpushed: rev}
	if !out.Never {
		out.Age = now.Sub(s.LastSync)
	}
	if id != "" && id == s.Workflow {
		out.Unpushed = max(rev-s.Mirrored, 0)
	}
	if id != "" && id == s.claimsFor {
		out.Unconfirmed = s.unconfirmed
	}
	return out
}
