package hook_test

import (
	"cmp"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStopNamesTheFileInTheWayOfALongMemoryPath: with a file above the memory directory, the
// turn's end named both, the file and then the memory directory below it, whose path repeats
// the file's: with a long home path the line was cut to fit, and the cut took what the file is.
// It names the file in the way, what it is, and the step.
func TestStopNamesTheFileInTheWayOfALongMemoryPath(t *testing.T) {
	getenv, _ := startedProject(t, "apex-long")
	file := memoryInTheWay(t, getenv)
	mem := filepath.Join(file, "projects", "-home-alexandra-konstantinopoulou-src-github-com-acme-payments-service", "memory")
	env := map[string]string{"CAIRN_MEMORY_DIR": mem}
	long := func(k string) string { return cmp.Or(env[k], getenv(k)) }
	moveOwingALine(t, long)
	got, _ := runStop(long, "s1")
	for _, want := range []string{file + " is a file", "set CAIRN_MEMORY_DIR to a directory"} {
		if !strings.Contains(got, want) {
			t.Errorf("the turn's end says %s\nwant it to say %q", got, want)
		}
	}
	if data, _ := os.ReadFile(file); string(data) != "in the way\n" {
		t.Errorf("the file in the way holds %q now", data)
	}
}
