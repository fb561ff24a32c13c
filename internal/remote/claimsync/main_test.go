package claimsync

import (
	"testing"

	"github.com/cairn-dev/cairn/internal/store/storetest"
)

// TestMain: the test binary run again as a child (exec.Command(os.Args[0], ...)) exits
// without the race detector's one-second sleep.
func TestMain(m *testing.M) { storetest.Main(m) }
