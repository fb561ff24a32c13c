//go:build !linux && !darwin

package cli

import "os"

// terminal: f is a character device (a console; elsewhere only Linux and macOS, the platforms
// cairn is released for, ask the terminal driver).
func terminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
