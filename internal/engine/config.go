package engine

import (
	"path/filepath"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/memory"
)

// configFile holds the project's Cairn settings, beside its state:
//
//	{"archive_retention": 5, "stop_blocking": true, "approvals": false}
//
// CAIRN_ARCHIVE_RETENTION and CAIRN_STOP_BLOCKING (0/false/off) override it. "approvals":
// false lets the agent leave approval phases without asking a person; no environment
// variable overrides it, as the agent can set those for the commands it runs.
const configFile = "config.json"

type fileConfig struct {
	ArchiveRetention *int  `json:"archive_retention,omitempty"`
	StopBlocking     *bool `json:"stop_blocking,omitempty"`
	Approvals        *bool `json:"approvals,omitempty"`
}

// approvalsOff says whether a person turned approval gates off for the project.
func (e *Engine) approvalsOff() bool {
	return e.conf.Approvals != nil && !*e.conf.Approvals
}

func readConfig(stateDir string) fileConfig {
	data, _ := durable.ReadPath(filepath.Join(stateDir, configFile), 64<<10, true) // nil when missing or unreadable
	return decodeLenient[fileConfig](data)
}

// stopBlocking says whether the Stop hook may ask the agent about blocking violations.
func (e *Engine) stopBlocking() bool {
	switch v := e.cfg.Getenv("CAIRN_STOP_BLOCKING"); {
	case memory.Truthy(v):
		return true
	case memory.Falsy(v):
		return false
	case e.conf.StopBlocking != nil:
		return *e.conf.StopBlocking
	}
	return true
}
