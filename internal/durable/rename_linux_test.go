package durable_test

import (
	"testing"

	"github.com/cairn-dev/cairn/internal/durable"
)

// The fallback for a filesystem that refuses RENAME_NOREPLACE (EINVAL) keeps the same promise.
func TestRenameLinkedFallback(t *testing.T) {
	d, _ := mustDir(t)
	renameNoReplaceCases(t, d, func(o, n string) error { return durable.RenameLinked(d, o, n) })
}
