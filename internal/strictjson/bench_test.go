package strictjson_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/strictjson"
)

// doc1M is a 1 MB checkpoint-shaped document: objects of short strings, paths and numbers.
func doc1M() []byte {
	var b strings.Builder
	b.WriteString(`{"items":[`)
	for i := 0; b.Len() < 1<<20-300; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"path":"/work/project/specs/042_feature/reports/%03d_topic.md","done":%t,"note":"checked \u00e9 and \"quoted\" text"}`, i, i%1000, i%2 == 0)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkCheck1M is the strict gate alone, beside json.Valid on the same bytes.
func BenchmarkCheck1M(b *testing.B) {
	doc := doc1M()
	b.Run("strictjson.Check", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if err := strictjson.Check(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("strictjson.AppendSpans", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		var spans []int
		for b.Loop() {
			var err error
			if spans, err = strictjson.Default.AppendSpans(spans[:0], doc, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if !json.Valid(doc) {
				b.Fatal("invalid")
			}
		}
	})
}
