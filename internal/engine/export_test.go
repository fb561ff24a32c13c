package engine

import "encoding/json"

// History is HistoryNotices' journal alone, for the tests.
func (e *Engine) History(id string) ([]Event, error) {
	evs, _, _, err := e.HistoryNotices(id)
	return evs, err
}

// List is ListRecent's whole list alone, for the tests.
func (e *Engine) List() ([]Summary, error) {
	out, _, err := e.ListRecent(0)
	return out, err
}

// Show is ShowNotices' record alone, for the tests.
func (e *Engine) Show(id string) (json.RawMessage, error) {
	data, _, _, err := e.ShowNotices(id)
	return data, err
}
