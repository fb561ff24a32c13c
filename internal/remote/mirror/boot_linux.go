package mirror

import (
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// bootID names this boot: another after a reboot.
var bootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
})

// SinceBoot is this boot's name and the time since it, suspended time included (others' lease
// clocks run on meanwhile), by a clock nobody sets; ok is false when either is not known.
func SinceBoot() (boot string, up time.Duration, ok bool) {
	var ts unix.Timespec
	if boot = bootID(); boot == "" || unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return "", 0, false
	}
	return boot, time.Duration(ts.Nano()), true
}
