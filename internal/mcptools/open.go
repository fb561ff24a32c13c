package mcptools

import "github.com/cairn-dev/cairn/internal/engine"

// OpenEngine opens the real engine.
func OpenEngine(cfg engine.Config) (Engine, error) {
	e, err := engine.Open(cfg)
	if err != nil {
		return nil, err
	}
	return e, nil
}
