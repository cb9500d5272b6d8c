package flows

import (
	"slices"
	"sort"
	"testing"

	"github.com/rocedump/rocedump/decode/bth"
)

// TestCountsInlineAndOverflow checks the inline counters against a plain
// map, past the inline slots and into the overflow slices.
func TestCountsInlineAndOverflow(t *testing.T) {
	f := new(Flow)
	if f.Opcodes() != nil || f.DSCP() != nil || f.ports.list(f.cold) != nil {
		t.Fatal("empty counters: want nil lists")
	}
	wantOp := map[bth.Opcode]uint64{}
	wantV := map[uint8]uint64{}
	var wantPorts []uint16
	for i := range 5000 {
		op := bth.Opcode([]int{0x81, 0x06, 0x07, 0x08, 0x11, 0xff, 0x00, 0x0a}[(i*7)%8] % 256)
		if i%97 == 0 {
			op = bth.Opcode(i % 256)
		}
		f.Packets++ // every packet counts an opcode and a DSCP value
		f.countOpcode(op)
		wantOp[op]++
		v := uint8((i * 13) % 7)
		if i%11 == 0 {
			v = 255
		}
		f.countDSCP(v)
		wantV[v]++
		p := uint16(i % 100)
		f.addPort(p)
		if !slices.Contains(wantPorts, p) && len(wantPorts) < maxPorts {
			wantPorts = append(wantPorts, p)
		}
	}
	var gotOp []OpcodeCount
	for op, n := range wantOp {
		gotOp = append(gotOp, OpcodeCount{op, n})
	}
	sort.Slice(gotOp, func(i, j int) bool { return gotOp[i].Opcode < gotOp[j].Opcode })
	if s := f.Opcodes(); !slices.Equal(s, gotOp) {
		t.Errorf("opcodes: got %v, want %v", s, gotOp)
	}
	var gotV []ValueCount
	for v, n := range wantV {
		gotV = append(gotV, ValueCount{v, n})
	}
	sort.Slice(gotV, func(i, j int) bool { return gotV[i].Value < gotV[j].Value })
	if s := f.DSCP(); !slices.Equal(s, gotV) {
		t.Errorf("values: got %v, want %v", s, gotV)
	}
	if l := f.ports.list(f.cold); !slices.Equal(l, wantPorts) || !f.ports.more {
		t.Errorf("ports: got %v (more %v), want %v (more true)", l, f.ports.more, wantPorts)
	}
}
