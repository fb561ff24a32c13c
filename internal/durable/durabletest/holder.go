package durabletest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
)

// HeldBySleeper takes lock name in dir as a process of its own would: it starts a `sleep`
// that lives until the test ends, takes the lock, and records that process as its holder, as
// a Cairn process records itself. The tests stop or kill the process to see what a waiter
// then says. The lock is let go when the test ends.
func HeldBySleeper(t testing.TB, dir, name string) *os.Process {
	t.Helper()
	sleeper := exec.Command("sleep", "600")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	d, err := durable.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	unlock, err := d.Lock(name, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unlock() })
	host, _ := os.Hostname()
	rec, _ := json.Marshal(durable.Holder{PID: sleeper.Process.Pid, Command: "sleep", Since: time.Now(), Host: host})
	if err := os.WriteFile(filepath.Join(dir, name), rec, 0o600); err != nil {
		t.Fatal(err)
	}
	return sleeper.Process
}
