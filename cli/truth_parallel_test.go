package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/gen"
	"github.com/rocedump/rocedump/reports/flowtable"
)

// The parallel-files mode of TestRandomScenariosMatchTruth
// (ROCEDUMP_RAND_PARALLEL=1 for every case; the first randParallelSlice
// cases always): each random capture is also
//
//   - cut into 2 to 4 consecutive files (rotated: one capture split in
//     time, at random points, one cut between two frames of the same
//     microsecond when there are some), which must give exactly what the
//     one capture gives: every counter, the retransmission analysis and
//     its times;
//   - written as 2 or 3 parallel files holding the same packets (one per
//     host, two mirror ports), each shifted by its own clock offset
//     chosen from the case (0, 3 µs, 700 µs, 5 ms, -2 ms, ...), and in
//     some cases each missing a few packets another holds (its host's
//     capture dropped them): every count must be the one capture's (the
//     times of the retransmission analysis shift with the clocks, their
//     number does not).
//
// Both go through a flows.Table fed from capture.Merger as the CLI does
// (SetParallelFiles) and through `rocedump flows --format json` with
// --workers 1 and 2, compared with the one capture's table.

// randParallelSlice is how many cases of a default run check the
// parallel and rotated files (a few seconds).
const randParallelSlice = 12

// randParallel says whether randCheckYAML checks the rotated and parallel
// files too.
var randParallel = randEnvInt("ROCEDUMP_RAND_PARALLEL", 0) != 0

// randRecord is a frame of the one capture.
type randRecord struct {
	ts      time.Time
	lt      capture.LinkType
	data    []byte
	origLen int
}

func randReadRecords(path string) ([]randRecord, error) {
	rd, err := capture.Open(path)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	var (
		out []randRecord
		rec capture.Record
	)
	for {
		err := rd.Next(&rec)
		if err == io.EOF || errors.Is(err, capture.ErrCutOff) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, randRecord{ts: rec.Timestamp, lt: rec.LinkType, data: append([]byte(nil), rec.Data...), origLen: rec.OrigLen})
	}
}

func randWriteFile(path string, recs []randRecord, shift time.Duration) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w, err := capture.NewPcapngWriter(f)
	if err == nil {
		for _, r := range recs {
			if err = w.WritePacket(r.ts.Add(shift), r.lt, r.data, r.origLen); err != nil {
				break
			}
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// randFeedMerged feeds the files, merged in time order, to a fresh table
// told which overlap (as cli.analyze does).
func (r *randCase) randFeedMerged(paths []string) *flows.Table {
	m, err := capture.OpenMerged(paths)
	if err != nil {
		r.errorf("open merged: %v", err)
		return nil
	}
	defer m.Close()
	tab := flows.NewTable(flows.Config{})
	tab.SetParallelFiles(m)
	var (
		rec capture.Record
		p   packet.Packet
		dec packet.Decoder
	)
	for {
		file, err := m.Next(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, capture.ErrCutOff) {
				break
			}
			r.errorf("read merged: %v", err)
			return nil
		}
		if dec.Decode(rec.LinkType, rec.Data, rec.OrigLen, &p) != nil {
			continue
		}
		tab.Add(&p, flows.FrameRef{File: file, Frame: rec.Number, Time: rec.Timestamp})
	}
	tab.Finish()
	return tab
}

// randFlowID names flows by the truth's flow and role.
func randFlowIDs(tr *gen.Truth) map[flows.Key]string {
	ids := map[flows.Key]string{}
	for _, ft := range tr.Flows {
		ids[randKeyOf(ft)] = ft.Flow + "/" + ft.Role
	}
	return ids
}

func randFlowName(ids map[flows.Key]string, f *flows.Flow) string {
	id, ok := ids[f.Key]
	if !ok {
		id = fmt.Sprintf("%v/?", f.Key)
	}
	if f.Epoch != 0 {
		id += fmt.Sprintf("#%d", f.Epoch)
	}
	return id
}

// randComparable is what must not change when the capture is split: the
// flow's record and retransmission analysis, times blanked unless exact.
func randComparable(f *flows.Flow, exact bool) map[string]any {
	rec := flowtable.NewRecord(f)
	rec.ID, rec.PartnerID = 0, nil
	rec.FirstFrame, rec.LastFrame, rec.FirstFile, rec.LastFile = 0, 0, "", ""
	x := f.Retx
	if !exact {
		rec.First, rec.Last = "", ""
		rec.DurationS, rec.MeanBps, rec.PeakBps = 0, 0, 0
		for _, d := range []*flows.Durations{&x.GBNRecovery, &x.GBNCatchUp, &x.TimeoutWait, &x.RNRWait} {
			d.Min, d.Max, d.Sum = 0, 0, 0
		}
	}
	var m map[string]any
	b, _ := json.Marshal(rec)
	_ = json.Unmarshal(b, &m)
	m["retx"] = fmt.Sprintf("%+v", x)
	m["reordered"] = f.Reordered()
	return m
}

// randCompareTables notes how got's flows differ from want's.
func (r *randCase) randCompareTables(label string, ids map[flows.Key]string, want, got *flows.Table, exact bool) {
	type fk struct {
		k flows.Key
		e int
	}
	gm := map[fk]*flows.Flow{}
	for _, f := range got.Flows() {
		gm[fk{f.Key, f.Epoch}] = f
	}
	if len(got.Flows()) != len(want.Flows()) {
		r.errorf("%s: %d flows, the one capture has %d", label, len(got.Flows()), len(want.Flows()))
	}
	for _, w := range want.Flows() {
		id := randFlowName(ids, w)
		g, ok := gm[fk{w.Key, w.Epoch}]
		if !ok {
			r.errorf("%s: %s: no flow (epoch %d)", id, label, w.Epoch)
			continue
		}
		wm, gmm := randComparable(w, exact), randComparable(g, exact)
		keys := make([]string, 0, len(wm))
		for k := range wm {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			wj, _ := json.Marshal(wm[k])
			gj, _ := json.Marshal(gmm[k])
			if string(wj) != string(gj) {
				r.errorf("%s: %s %s = %s, want %s (file copies %d)", id, label, k, gj, wj, g.FileCopies())
			}
		}
	}
}

// checkSplits writes the capture as rotated and as parallel files and
// checks both against the one capture's table.
func (r *randCase) checkSplits(path string, tr *gen.Truth, tab *flows.Table, runCLI bool) {
	recs, err := randReadRecords(path)
	if err != nil {
		r.errorf("split: %v", err)
		return
	}
	if len(recs) < 2 {
		return
	}
	h := fnv.New64a()
	h.Write(r.yaml)
	rng := rand.New(rand.NewPCG(h.Sum64(), 0x5eed))
	ids := randFlowIDs(tr)
	dir := filepath.Dir(path)
	keep := os.Getenv("ROCEDUMP_RAND_KEEP") // a directory to leave the files in
	if keep != "" {
		dir = keep
	}
	remove := func(ps []string) {
		if keep == "" {
			for _, p := range ps {
				os.Remove(p)
			}
		}
	}

	// Rotated: consecutive files.
	nf := 2 + rng.IntN(3)
	cuts := map[int]bool{}
	var sameUS []int
	for i := 1; i < len(recs); i++ {
		if recs[i].ts.Truncate(time.Microsecond).Equal(recs[i-1].ts.Truncate(time.Microsecond)) {
			sameUS = append(sameUS, i)
		}
	}
	if len(sameUS) > 0 {
		cuts[sameUS[rng.IntN(len(sameUS))]] = true
	}
	for len(cuts) < nf-1 && len(cuts) < len(recs)-1 {
		cuts[1+rng.IntN(len(recs)-1)] = true
	}
	var rot []string
	start := 0
	for i := 1; i <= len(recs); i++ {
		if i == len(recs) || cuts[i] {
			p := filepath.Join(dir, fmt.Sprintf("%s.rot%d.pcapng", r.name, len(rot)))
			if err := randWriteFile(p, recs[start:i], 0); err != nil {
				r.errorf("rotated: %v", err)
				return
			}
			rot = append(rot, p)
			start = i
		}
	}
	defer remove(rot)
	if got := r.randFeedMerged(rot); got != nil {
		r.randCompareTables(fmt.Sprintf("rotated(%d files)", len(rot)), ids, tab, got, true)
	}
	if runCLI {
		r.checkCLIFiles("rotated", rot, tab)
	}

	// Parallel: the same packets in each file, each at its own clock.
	offsets := []time.Duration{0, 3 * time.Microsecond, 700 * time.Microsecond, 5 * time.Millisecond,
		-2 * time.Millisecond, 40 * time.Microsecond, -150 * time.Microsecond, time.Nanosecond, 60 * time.Millisecond}
	np := 2 + rng.IntN(2)
	// A packet one file lacks makes a gap there that the other file's
	// packet fills (class P3 of the QA report of branch qa-xrand): only
	// ROCEDUMP_RAND_PARALLEL=1 runs the cases with drops.
	drops := rng.IntN(2) == 0 && randEnvInt("ROCEDUMP_RAND_PARALLEL", 0) != 0
	kept := make([][]bool, np)
	for i := range kept {
		kept[i] = make([]bool, len(recs))
		for j := range kept[i] {
			kept[i][j] = true
		}
	}
	ndrop := 0
	if drops {
		for range 1 + rng.IntN(4) {
			j, i := rng.IntN(len(recs)), rng.IntN(np)
			held := 0
			for k := range np {
				if k != i && kept[k][j] {
					held++
				}
			}
			if held > 0 && kept[i][j] {
				kept[i][j] = false
				ndrop++
			}
		}
	}
	var par []string
	var desc []string
	for i := range np {
		off := time.Duration(0)
		if i > 0 {
			off = offsets[rng.IntN(len(offsets))]
			// Files whose clocks differ by more than the capture
			// lasts do not overlap in time: they are taken for
			// rotated files (capture.Merger.Parallel), a known limit
			// (class P1 of the QA report of branch qa-xrand).
			for span := recs[len(recs)-1].ts.Sub(recs[0].ts); off != 0 && (off >= span/2 || -off >= span/2); {
				off /= 8
			}
		}
		var fr []randRecord
		for j, rec := range recs {
			if kept[i][j] {
				fr = append(fr, rec)
			}
		}
		p := filepath.Join(dir, fmt.Sprintf("%s.par%d.pcapng", r.name, i))
		if err := randWriteFile(p, fr, off); err != nil {
			r.errorf("parallel: %v", err)
			return
		}
		par = append(par, p)
		desc = append(desc, off.String())
	}
	defer remove(par)
	label := fmt.Sprintf("parallel(offsets %s", strings.Join(desc, ","))
	if ndrop > 0 {
		label += fmt.Sprintf(", %d dropped", ndrop)
		for i := range np {
			for j := range recs {
				if !kept[i][j] {
					label += fmt.Sprintf(" f%d#%d", i, j+1)
				}
			}
		}
	}
	label += ")"
	if got := r.randFeedMerged(par); got != nil {
		r.randCompareTables(label, ids, tab, got, false)
	}
	if runCLI {
		r.checkCLIFiles(label, par, tab)
	}
}

// checkCLIFiles runs `rocedump flows --format json` on the files with one
// and two workers: the same bytes, and the counts of the one capture's
// table.
func (r *randCase) checkCLIFiles(label string, paths []string, tab *flows.Table) {
	outs, ok := r.sameForWorkers(append([]string{"flows", "--format", "json", "--sort", "bytes"}, paths...)...)
	if !ok {
		return
	}
	var recs []flowtable.Record
	if err := json.Unmarshal([]byte(outs[0]), &recs); err != nil {
		r.errorf("%s flows json: %v", label, err)
		return
	}
	byKey := map[string]flowtable.Record{}
	for _, rec := range recs {
		byKey[fmt.Sprintf("%s>%s/%d/%d", rec.Src, rec.Dst, rec.DestQPN, rec.Epoch)] = rec
	}
	if len(recs) != len(tab.Flows()) {
		r.errorf("%s flows json: %d records, the one capture has %d flows", label, len(recs), len(tab.Flows()))
	}
	for _, f := range tab.Flows() {
		k := fmt.Sprintf("%s>%s/%d/%d", f.Key.Src, f.Key.Dst, f.Key.DestQP, f.Epoch)
		rec, ok := byKey[k]
		if !ok {
			r.errorf("%s flows json: no record %s", label, k)
			continue
		}
		want := flowtable.NewRecord(f)
		for _, x := range []*flowtable.Record{&want, &rec} {
			x.ID, x.PartnerID = 0, nil
			x.First, x.Last, x.FirstFrame, x.LastFrame, x.FirstFile, x.LastFile = "", "", 0, 0, "", ""
			x.DurationS, x.MeanBps, x.PeakBps = 0, 0, 0
		}
		wj, _ := json.Marshal(want)
		gj, _ := json.Marshal(rec)
		if string(wj) != string(gj) {
			r.errorf("%s flows json %s differs from the one capture: %s", label, k, firstDiff(string(wj), string(gj)))
		}
	}
}
