package flowtable

import (
	"testing"
)

// BenchmarkRecordJSON measures what writing a flow table as JSON costs a
// flow, in its two steps: making the Record of a flow (Builder.Record)
// and encoding it indented (AppendRecord), on the generated captures'
// flows; and both, as EncodeRecords does them (encodeChunk: the encoder
// writes the Builder's maps from its lists).
func BenchmarkRecordJSON(b *testing.B) {
	fs := genFlows(b)
	b.Run("build", func(b *testing.B) {
		var bu Builder
		for i := range b.N {
			bu.Record(fs[i%len(fs)])
		}
	})
	b.Run("encode", func(b *testing.B) {
		var bu Builder
		recs := make([]Record, len(fs))
		for i, f := range fs {
			recs[i] = *bu.Record(f)
			bu = Builder{}
		}
		e := JSONEncoder{Indent: "  ", EscapeHTML: true}
		var dst []byte
		n := 0
		for i := range b.N {
			var err error
			if dst, err = e.AppendRecord(dst[:0], &recs[i%len(recs)], 2); err != nil {
				b.Fatal(err)
			}
			n += len(dst)
		}
		b.ReportMetric(float64(n)/float64(b.N), "bytes/record")
	})
	b.Run("both", func(b *testing.B) {
		src := FlowsOf(fs)
		chunks := (src.Len() + chunkRecords - 1) / chunkRecords
		e := JSONEncoder{Indent: "  ", EscapeHTML: true}
		var bu Builder
		var dst []byte
		n, recs := 0, 0
		for i := 0; recs < b.N; i++ {
			k := i % chunks
			var err error
			dst, err = encodeChunk(dst[:0], src, k, &e, &bu, func(e *JSONEncoder, dst []byte, _ int, r *Record) ([]byte, error) {
				return e.AppendRecord(dst, r, 2)
			})
			if err != nil {
				b.Fatal(err)
			}
			n += len(dst)
			recs += min(chunkRecords, src.Len()-k*chunkRecords)
		}
		b.ReportMetric(float64(n)/float64(recs), "bytes/record")
	})
}
