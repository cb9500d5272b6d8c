package flows_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/internal/testcaps"
)

// TestShardsMatchOneTable feeds every generated and real capture to one
// Table and, split by ShardOf, to 2 and 3 shard tables (and by Splits
// that give shard 0 less), merges the shards and requires the same flows:
// every exported field and method value, the partner by ID, and Current
// for every key.
func TestShardsMatchOneTable(t *testing.T) {
	paths := testcaps.All(t, "../testdata/pcaps")
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			one := flows.NewTable(flows.Config{})
			type sharded struct {
				name  string
				n     int
				shard func(p *packet.Packet) int
				tabs  []*flows.Table
			}
			var passes []*sharded
			for _, n := range []int{2, 3} {
				passes = append(passes, &sharded{name: fmt.Sprintf("%d shards", n), n: n, shard: func(p *packet.Packet) int { return flows.ShardOf(p, n) }})
			}
			for _, s := range []flows.Split{flows.NewSplit(2, 0.3), flows.NewSplit(3, 0.1)} {
				passes = append(passes, &sharded{name: fmt.Sprintf("%d shards, %.2f to shard 0", s.Shards(), s.Share(0)), n: s.Shards(), shard: s.Of})
			}
			for _, s := range passes {
				for range s.n {
					s.tabs = append(s.tabs, flows.NewTable(flows.Config{}))
				}
			}
			feedCapture(t, path, func(p *packet.Packet, at flows.FrameRef) {
				one.Add(p, at)
				for _, s := range passes {
					s.tabs[s.shard(p)].Add(p, at)
				}
			})
			one.Finish()
			for _, s := range passes {
				for _, tab := range s.tabs {
					tab.Finish()
				}
				compareTables(t, s.name, one, flows.MergeShards(s.tabs))
			}
		})
	}
}

// feedCapture decodes every frame of a capture, numbering them in
// FrameRef.Seq.
func feedCapture(t *testing.T, path string, add func(*packet.Packet, flows.FrameRef)) {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var (
		rec capture.Record
		p   packet.Packet
		dec packet.Decoder
		seq uint64
	)
	for {
		err := r.Next(&rec)
		if err == io.EOF || errors.Is(err, capture.ErrCutOff) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		seq++
		if dec.Decode(rec.LinkType, rec.Data, rec.OrigLen, &p) != nil {
			continue
		}
		add(&p, flows.FrameRef{File: 0, Frame: rec.Number, Time: rec.Timestamp, Seq: seq})
	}
}

// compareTables requires got to hold the flows of want.
func compareTables(t *testing.T, what string, want, got *flows.Table) {
	t.Helper()
	if got.Len() != want.Len() || len(got.Flows()) != len(want.Flows()) {
		t.Errorf("%s: %d flows, want %d", what, got.Len(), want.Len())
		return
	}
	for i, w := range want.Flows() {
		g := got.Flows()[i]
		if d := flowDiff(w, g); d != "" {
			t.Errorf("%s: flow %d (%v): %s", what, w.ID, w.Key, d)
			return
		}
		if c := got.Current(w.Key); c == nil || c.ID != want.Current(w.Key).ID {
			t.Errorf("%s: Current(%v) = %v, want flow %d", what, w.Key, c, want.Current(w.Key).ID)
			return
		}
	}
}

// flowDiff compares every exported field and the value of every exported
// method of two flows (the partner by ID), but the setters (for flows made
// from records); "" if they are the same.
func flowDiff(want, got *flows.Flow) string {
	wv, gv := reflect.ValueOf(want).Elem(), reflect.ValueOf(got).Elem()
	ty := wv.Type()
	for i := range ty.NumField() {
		fd := ty.Field(i)
		if !fd.IsExported() {
			continue
		}
		w, g := wv.Field(i).Interface(), gv.Field(i).Interface()
		if fd.Name == "Partner" {
			w, g = partnerID(want.Partner), partnerID(got.Partner)
		}
		if !reflect.DeepEqual(w, g) {
			return fmt.Sprintf("%s = %+v, want %+v", fd.Name, g, w)
		}
	}
	wp, gp := reflect.ValueOf(want), reflect.ValueOf(got)
	for i := range wp.NumMethod() {
		m := wp.Type().Method(i)
		if strings.HasPrefix(m.Name, "Set") {
			continue
		}
		var args [][]reflect.Value
		switch m.Type.NumIn() {
		case 1:
			args = [][]reflect.Value{nil}
		case 2:
			switch in := m.Type.In(1); {
			case in == reflect.TypeOf(flows.RetxEventKind(0)):
				for k := range flows.RetxEventKind(10) {
					args = append(args, []reflect.Value{reflect.ValueOf(k)})
				}
			case in.Kind() == reflect.Slice && strings.HasPrefix(m.Name, "Append"):
				args = [][]reflect.Value{{reflect.Zero(in)}} // AppendOpcodes and the like, to nil
			default:
				return "unexpected method " + m.Name
			}
		default:
			return "unexpected method " + m.Name
		}
		for _, a := range args {
			w, g := wp.Method(i).Call(a), gp.Method(i).Call(a)
			for j := range w {
				if !reflect.DeepEqual(w[j].Interface(), g[j].Interface()) {
					return fmt.Sprintf("%s%v = %+v, want %+v", m.Name, a, g[j], w[j])
				}
			}
		}
	}
	return ""
}

func partnerID(f *flows.Flow) int {
	if f == nil {
		return 0
	}
	return f.ID
}

// TestShardOf checks that both directions between two hosts go to one
// shard, in range, and that the shards share the hosts out.
func TestShardOf(t *testing.T) {
	var p packet.Packet
	if got := flows.ShardOf(&p, 1); got != 0 {
		t.Errorf("ShardOf(n=1) = %d", got)
	}
	if got := flows.ShardOf(&p, 0); got != 0 {
		t.Errorf("ShardOf(n=0) = %d", got)
	}
	for _, n := range []int{2, 3, 7} {
		count := make([]int, n)
		for a := range 32 {
			for b := range 32 {
				for _, v6 := range []bool{false, true} {
					src := netip.AddrFrom4([4]byte{10, 0, byte(a % 8), byte(a)})
					dst := netip.AddrFrom4([4]byte{10, 0, byte(b % 8), byte(b)})
					if v6 {
						src = netip.AddrFrom16([16]byte{0xfe, 0x80, 15: byte(a)})
						dst = netip.AddrFrom16([16]byte{0xfe, 0x80, 14: 1, 15: byte(b)})
					}
					p.Src, p.Dst = src, dst
					s := flows.ShardOf(&p, n)
					p.Src, p.Dst = dst, src
					if r := flows.ShardOf(&p, n); r != s || s < 0 || s >= n {
						t.Fatalf("n=%d %v<->%v: shards %d and %d", n, src, dst, s, r)
					}
					count[s]++
				}
			}
		}
		for i, c := range count {
			if c < 2*32*32/n/2 {
				t.Errorf("n=%d: shard %d has %d of %d host pairs", n, i, c, 2*32*32)
			}
		}
	}
}

// TestSplit checks that a Split keeps both directions between two hosts
// together, gives the same shard to a peeked IPv4 frame (OfIPv4) as to
// its decoded packet (Of), and shares the host pairs out as asked: shard 0
// the fraction given (as Share says), the others equal parts of the rest.
func TestSplit(t *testing.T) {
	var p packet.Packet
	for _, s := range []flows.Split{{}, flows.NewSplit(1, 1), flows.NewSplit(0, 0.5)} {
		p.Src, p.Dst = netip.AddrFrom4([4]byte{10, 0, 0, 1}), netip.AddrFrom4([4]byte{10, 0, 0, 2})
		if s.Of(&p) != 0 || s.OfIPv4(1, 2) != 0 || s.Share(0) != 1 {
			t.Errorf("%+v: one shard, yet Of %d, OfIPv4 %d, Share %v", s, s.Of(&p), s.OfIPv4(1, 2), s.Share(0))
		}
	}
	const hosts = 256
	for _, c := range []struct {
		n     int
		first float64
	}{{2, 0.5}, {2, 0.3}, {3, 0.1}, {4, 0}, {8, 0}, {5, 1}, {2000, 0.2}} {
		s := flows.NewSplit(c.n, c.first)
		count := make([]int, c.n)
		for a := range hosts {
			for b := range a {
				src := netip.AddrFrom4([4]byte{10, byte(a % 8), byte(a / 8), 1})
				dst := netip.AddrFrom4([4]byte{10, byte(b % 8), byte(b / 8), 2})
				p.Src, p.Dst = src, dst
				got := s.Of(&p)
				p.Src, p.Dst = dst, src
				v4, w4 := src.As4(), dst.As4()
				peeked := s.OfIPv4(binary.BigEndian.Uint32(v4[:]), binary.BigEndian.Uint32(w4[:]))
				if back := s.Of(&p); back != got || peeked != got || got < 0 || got >= c.n {
					t.Fatalf("n=%d first=%v %v<->%v: shards %d, %d back, %d peeked", c.n, c.first, src, dst, got, back, peeked)
				}
				count[got]++
			}
		}
		pairs := hosts * (hosts - 1) / 2
		sum := 0.0
		for i := range c.n {
			sum += s.Share(i)
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("n=%d first=%v: shares add up to %v", c.n, c.first, sum)
		}
		if c.n > 1024 {
			continue // more shards than buckets: ShardOf's even split
		}
		if got := s.Share(0); math.Abs(got-c.first) > 1.0/1024 {
			t.Errorf("n=%d first=%v: Share(0) = %v", c.n, c.first, got)
		}
		for i, k := range count {
			want := s.Share(i) * float64(pairs)
			if math.Abs(float64(k)-want) > 0.05*float64(pairs)/float64(c.n)+5 {
				t.Errorf("n=%d first=%v: shard %d has %d of %d host pairs, want about %.0f", c.n, c.first, i, k, pairs, want)
			}
		}
	}
}
