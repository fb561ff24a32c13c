// Command cairn is Cairn's command line for people and for bash blocks: workflow status, a
// live watch, list, show, history, archive, expire, doctor, and the shell API
// (checkpoint, vars, log). All of it lives in internal/cli; `cairn help` documents it.
package main

import (
	"os"

	"github.com/cairn-dev/cairn/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}
