package migrate

import "testing"

func BenchmarkDetect(b *testing.B) {
	data := readFixture(b, "testdata/seed002/implementation.json")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Detect(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConvertSeed002(b *testing.B) {
	data := readFixture(b, "testdata/seed002/implementation.json")
	extra := Extra{Name: "phase.json", Execution: readFixture(b, "testdata/seed002/implementation.execution.json")}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := convert(Seed002, data, extra, testNow); err != nil {
			b.Fatal(err)
		}
	}
}
