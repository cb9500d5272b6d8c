package flowtable

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"runtime"
	"testing"
	"time"
)

// indented appends a record as an element of an indented array, for the
// tests of EncodeRecords.
func indented(e *JSONEncoder, dst []byte, i int, r *Record) ([]byte, error) {
	if i > 0 {
		dst = append(dst, ',')
	}
	dst = append(dst, "\n  "...)
	return e.AppendRecord(dst, r, 1)
}

// withProcs runs f with GOMAXPROCS set to n.
func withProcs(n int, f func()) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(n))
	f()
}

// manyFlows is the generated captures' flows over and over: a Source of
// more chunks of records than four Ps keep in flight, each flow made by
// several goroutines at once.
func manyFlows(t *testing.T) Source {
	fs := genFlows(t)
	all := fs
	for len(all) < 20*chunkRecords+77 {
		all = append(all, fs...)
	}
	return FlowsOf(all)
}

// TestEncodeRecordsSameBytes: EncodeRecords writes the bytes of one
// encoder over every record in order, whatever GOMAXPROCS is, over flows
// and over records, with one chunk or many.
func TestEncodeRecordsSameBytes(t *testing.T) {
	flowSrc := manyFlows(t)
	for name, src := range map[string]Source{
		"flows":     flowSrc,
		"records":   RecordsOf(flowSrc.Records()),
		"one chunk": flowSrc.Head(chunkRecords - 1),
		"empty":     flowSrc.Head(0),
	} {
		var want []byte
		enc := JSONEncoder{Indent: "  ", EscapeHTML: true}
		i := 0
		for r := range src.All() {
			var err error
			if want, err = indented(&enc, want, i, r); err != nil {
				t.Fatal(err)
			}
			i++
		}
		for _, procs := range []int{1, 2, 4, 7} {
			var got bytes.Buffer
			var err error
			withProcs(procs, func() { err = EncodeRecords(&got, src, JSONEncoder{Indent: "  ", EscapeHTML: true}, indented) })
			if err != nil {
				t.Fatalf("%s, GOMAXPROCS %d: %v", name, procs, err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s, GOMAXPROCS %d: %d bytes differ from one encoder's %d", name, procs, got.Len(), len(want))
			}
		}
	}
}

// failingWriter fails every write after the first n bytes.
type failingWriter struct{ n int }

var errWrite = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		n := w.n
		w.n = 0
		return n, errWrite
	}
	w.n -= len(p)
	return len(p), nil
}

// TestEncodeRecordsStopsOnError: an error of the writer or of the encoding
// half-way is returned, and no goroutine is left behind.
func TestEncodeRecordsStopsOnError(t *testing.T) {
	src := manyFlows(t)
	recs := src.Records()
	bad := 3*chunkRecords + 5
	recs[bad].MeanBps = math.NaN()
	var good bytes.Buffer
	if err := EncodeRecords(&good, RecordsOf(recs[:bad]), JSONEncoder{Indent: "  "}, indented); err != nil {
		t.Fatal(err)
	}
	for _, procs := range []int{1, 4} {
		withProcs(procs, func() {
			before := runtime.NumGoroutine()
			enc := JSONEncoder{Indent: "  "}
			if err := EncodeRecords(&failingWriter{n: 1 << 20}, src, enc, indented); !errors.Is(err, errWrite) {
				t.Errorf("GOMAXPROCS %d, failing writer: error %v, want %v", procs, err, errWrite)
			}
			var out bytes.Buffer
			var nan *json.UnsupportedValueError
			if err := EncodeRecords(&out, RecordsOf(recs), enc, indented); !errors.As(err, &nan) {
				t.Errorf("GOMAXPROCS %d, NaN in a record: error %v", procs, err)
			}
			if !bytes.HasPrefix(good.Bytes(), out.Bytes()) {
				t.Errorf("GOMAXPROCS %d, NaN in a record: wrote %d bytes, not only records before it", procs, out.Len())
			}
			checkGoroutines(t, before)
		})
	}
}

// checkGoroutines fails if more goroutines than before are left after a
// short wait for those ending.
func checkGoroutines(t *testing.T, before int) {
	t.Helper()
	for range 50 {
		if runtime.NumGoroutine() <= before {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("%d goroutines left, %d before", runtime.NumGoroutine(), before)
}

// TestWriteJSONOfAnyProcs: the flow list as `rocedump flows --format
// json` and `jsonl` write it is the same on any number of Ps, and is what
// encoding/json makes of the records.
func TestWriteJSONOfAnyProcs(t *testing.T) {
	src := manyFlows(t)
	recs := src.Records()
	var wantJSON bytes.Buffer
	je := json.NewEncoder(&wantJSON)
	je.SetIndent("", "  ")
	if err := je.Encode(recs); err != nil {
		t.Fatal(err)
	}
	var wantJSONL bytes.Buffer
	le := json.NewEncoder(&wantJSONL)
	le.SetEscapeHTML(false)
	for i := range recs {
		if err := le.Encode(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, procs := range []int{1, 3} {
		var gotJSON, gotJSONL bytes.Buffer
		var errJSON, errJSONL error
		withProcs(procs, func() {
			errJSON = WriteJSONOf(&gotJSON, src)
			errJSONL = WriteJSONLOf(&gotJSONL, src)
		})
		if errJSON != nil || errJSONL != nil {
			t.Fatalf("GOMAXPROCS %d: %v, %v", procs, errJSON, errJSONL)
		}
		if !bytes.Equal(gotJSON.Bytes(), wantJSON.Bytes()) {
			t.Errorf("GOMAXPROCS %d: WriteJSONOf differs from encoding/json", procs)
		}
		if !bytes.Equal(gotJSONL.Bytes(), wantJSONL.Bytes()) {
			t.Errorf("GOMAXPROCS %d: WriteJSONLOf differs from encoding/json", procs)
		}
	}
}
