package cli

import "golang.org/x/sys/unix"

// termiosRead is the request that reads a terminal's settings.
const termiosRead = unix.TIOCGETA
