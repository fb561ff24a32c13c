package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/memory"
	"github.com/cairn-dev/cairn/internal/strictjson"
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

// readConfig reads the project's settings. bad says why config.json, there, does not read as
// them ("" when it does, or is not there): a setting misspelt, of the wrong type, or a file that
// is not JSON was passed over without a word, and its archive_retention with it, so that
// retention removed archives a person had asked to keep. What does read is used.
func readConfig(stateDir string) (conf fileConfig, bad string) {
	data, _ := durable.ReadPath(filepath.Join(stateDir, configFile), 64<<10, true) // nil when missing or unreadable
	if data == nil {
		return conf, ""
	}
	// Strict, as every document Cairn reads: of a setting written twice, neither copy is used,
	// nor of one written again in another case, which encoding/json takes for the same.
	err := strictjson.Check(data)
	if err == nil {
		_, err = strictjson.FoldedTwice(data)
	}
	if err != nil {
		return conf, err.Error()
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err = dec.Decode(&conf)
	if n := conf.ArchiveRetention; err == nil && n != nil && *n < 0 {
		conf.ArchiveRetention = nil
		return conf, fmt.Sprintf("archive_retention is %d, not a whole number of 0 or more (0 keeps every archive)", *n)
	}
	if err == nil {
		return conf, ""
	}
	conf = decodeLenient[fileConfig](data)
	if n := conf.ArchiveRetention; n != nil && *n < 0 {
		conf.ArchiveRetention = nil
	}
	why := "it is not a JSON object"
	te, typ := errors.AsType[*json.UnmarshalTypeError](err)
	unknown, isUnknown := strings.CutPrefix(err.Error(), "json: unknown field ")
	switch {
	case typ && te.Field != "":
		why = strictjson.Explain(te).Error()
	case isUnknown:
		why = fmt.Sprintf("it has no setting %s (the settings are archive_retention, stop_blocking, approvals)", unknown)
	}
	return conf, why
}

// configWarning says that config.json in stateDir does not read (why), and what follows until
// it does: kept says that no archive is removed meanwhile.
func configWarning(stateDir, why string, kept bool) string {
	then := "the settings that do not read are not used until it is corrected"
	if kept {
		then = "the settings that do not read are not used, and no archive is removed, until it is corrected"
	}
	return fmt.Sprintf("%s does not read as Cairn's settings: %s; %s", filepath.Join(stateDir, configFile), why, then)
}

// envRetention reads CAIRN_ARCHIVE_RETENTION: set says it is set and reads as n archives kept
// (0: every one); bad says why it does not read, for cairn doctor.
func envRetention(getenv func(string) string) (n int, set bool, bad string) {
	v := getenv("CAIRN_ARCHIVE_RETENTION")
	if v == "" {
		return 0, false, ""
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return n, true, ""
	}
	return 0, false, "CAIRN_ARCHIVE_RETENTION is not a whole number of 0 or more (0 keeps every archive), so no archive is removed until it is corrected"
}

// retention is the number of archives kept (0: the store's default), and keepAll says that
// every one is kept: asked for with 0, or because the setting that would say how many does
// not read, so that a mistyped value never removes an archive a person meant to keep.
func retention(getenv func(string) string, conf fileConfig, confBad string) (n int, keepAll bool) {
	n, set, bad := envRetention(getenv)
	switch {
	case set:
	case bad != "" || conf.ArchiveRetention == nil && confBad != "":
		return math.MaxInt32, true
	case conf.ArchiveRetention != nil:
		n = *conf.ArchiveRetention
	}
	if n == 0 && (set || conf.ArchiveRetention != nil) {
		return math.MaxInt32, true
	}
	return n, false
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
