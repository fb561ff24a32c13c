package mcptools_test

import (
	"context"
	"strings"
	"testing"
)

// BenchmarkCheckpoint1MiB saves and loads a checkpoint of almost 1 MiB in process.
func BenchmarkCheckpoint1MiB(b *testing.B) {
	_, c := realServer(b)
	blob := strings.Repeat("0123456789abcdef", (1<<20-64)/16)
	save := toolRequest("save_checkpoint", `{"name":"big","data":{"blob":"`+blob+`"}}`)
	load := toolRequest("load_checkpoint", `{"name":"big"}`)
	ctx := context.Background() // the benchmark's own timeout bounds it; a fixed deadline would cut long runs
	for b.Loop() {
		if res, err := c.CallTool(ctx, save); err != nil || res.IsError {
			b.Fatal(err, res)
		}
		if res, err := c.CallTool(ctx, load); err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}
