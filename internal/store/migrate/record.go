package migrate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
)

// deriveID makes a workflow id for formats that have none, in the shape workflow.NewID gives
// new workflows: the type, the creation time and four hex digits, e.g.
// "apex-20261122T173000Z-3f9a". The digits come from the original's hash rather than a random
// source, so the same input always gets the same id. typ is already a valid name.
func deriveID(typ string, t time.Time, data []byte) string {
	sum := sha256.Sum256(data)
	prefix := typ
	if len(prefix) > 42 { // 42 + len("-20261122T173000Z-3f9a") = 64, the longest id
		prefix = prefix[:42]
	}
	return fmt.Sprintf("%s-%s-%s", prefix, t.UTC().Format("20060102T150405Z"), hex.EncodeToString(sum[:2]))
}
