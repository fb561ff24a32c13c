package mcptools

import (
	"errors"

	"github.com/cairn-dev/cairn/internal/engine"
)

// OpenEngine opens the real engine.
// TODO(mcp): engine.Open does not exist yet; switch as soon as it does.
func OpenEngine(cfg engine.Config) (Engine, error) {
	_ = cfg
	return nil, errors.New("engine not available yet")
}
