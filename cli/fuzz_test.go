package cli

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
)

// FuzzAnalysis feeds the whole analysis (flow table, report modules,
// renderers) with RoCEv2 traffic whose transport headers the fuzzer
// writes: the decoders have fuzz tests of their own, but what the flow
// table and the report make of any sequence of decodable packets (PSNs
// going anywhere, NAKs of every code, CM MADs with any fields, CNPs, READ
// responses without requests, new connections on old keys) must not
// panic either, and must not depend on how the pass is split: `report`
// and `flows` in every format run with 1 and 3 workers (the JSON and HTML
// reports and the JSON flows also with 2), the relay's rounds a few frames
// long, and must print the same bytes.
//
// The input is a list of frames, each 5 bytes and then the frame's bytes
// from the BTH on (its opcode, QPN, PSN and extension headers as the
// fuzzer writes them): the source and destination (2 bits each, of 4
// hosts, so that flows meet their partners) and, in the same byte, bit 4:
// in a VLAN tag, bit 5: followed by a copy mirrored by ERSPAN II, bit 6:
// preceded by a PFC frame, bit 7: over IPv6 (fd00::1 to fd00::4); the
// time step, the IP TOS
// byte (DSCP and ECN), how the frame is spoilt (bit 0: a wrong ICRC; bit
// 1: cut by a snap length, bits 2-7 bytes past UDP) and how many bytes
// follow (modulo fuzzMaxBTHPart+1).
func FuzzAnalysis(f *testing.F) {
	for _, seed := range fuzzAnalysisSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.pcap")
		if !writeFuzzCapture(t, path, in) {
			return
		}
		defer setBlocks(blockFrames, blockBytes, roundsInFlight)
		setBlocks(3, 400, 2)
		defer func(l int) { lookAhead = l }(lookAhead)
		lookAhead = lookAheadAlways
		// The JSON and HTML reports and the JSON flows with 1, 2 and 3
		// workers; the other renderers, cheaper to check, with 1 and 3.
		for _, c := range []struct {
			cmd     []string
			workers []int
		}{
			{[]string{"report", "--format", "json", "--fail-on", "never"}, []int{2, 3}},
			{[]string{"report", "--format", "html", "--fail-on", "never"}, []int{2, 3}},
			{[]string{"flows", "--format", "json"}, []int{2, 3}},
			{[]string{"report", "--format", "text", "--fail-on", "never"}, []int{3}},
			{[]string{"report", "--format", "markdown", "--fail-on", "never"}, []int{3}},
			{[]string{"flows", "--format", "jsonl"}, []int{3}},
			{[]string{"flows", "--format", "table"}, []int{3}},
			{[]string{"flows", "--format", "markdown"}, []int{3}},
			{[]string{"flows", "--format", "csv"}, []int{3}},
		} {
			cmd := c.cmd
			run := func(workers int) (string, string, int) {
				return runCLI(t, append(append([]string{}, cmd...), fmt.Sprintf("--workers=%d", workers), path)...)
			}
			wantOut, wantErr, wantCode := run(1)
			if wantCode != ExitOK && wantCode != ExitFindings {
				t.Fatalf("%s %s: exit %d: %s", cmd[0], cmd[2], wantCode, wantErr)
			}
			if cmd[0] == "report" && cmd[2] == "json" {
				checkFuzzMerge(t, wantOut)
			}
			for _, n := range c.workers {
				out, errOut, code := run(n)
				if code != wantCode || errOut != wantErr || out != wantOut {
					t.Fatalf("%s %s with %d workers differs from 1 worker (exit %d/%d, stderr %q/%q): %s",
						cmd[0], cmd[2], n, code, wantCode, errOut, wantErr, firstDiff(wantOut, out))
				}
			}
		}
	})
}

// checkFuzzMerge merges the JSON report of a fuzzed capture, alone and
// with itself, in every format: merge must take any report that report
// writes.
func checkFuzzMerge(t *testing.T, report string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--format", "json", path}, {"--format", "text", path}, {"--format", "markdown", path},
		{"--format", "html", path}, {"--format", "json", path, path},
	} {
		if _, errOut, code := runCLI(t, append([]string{"merge", "--fail-on", "never"}, args...)...); code != ExitOK {
			t.Fatalf("merge %q: exit %d: %s", args, code, errOut)
		}
	}
}

// Fuzzed frames: the fixed part of each (see FuzzAnalysis) and the most
// bytes of transport headers and payload one carries.
const (
	fuzzFrameHead  = 5
	fuzzMaxBTHPart = 96
	fuzzMaxFrames  = 64
)

// writeFuzzCapture writes the frames in describes as a pcap file at path,
// and says whether in held at least one.
func writeFuzzCapture(t *testing.T, path string, in []byte) bool {
	var buf bytes.Buffer
	w, err := capture.NewPcapWriter(&buf, capture.LinkTypeEthernet, 256)
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	frames := 0
	for len(in) >= fuzzFrameHead && frames < fuzzMaxFrames {
		hosts, step, tos, how, n := in[0], in[1], in[2], in[3], int(in[4])%(fuzzMaxBTHPart+1)
		in = in[fuzzFrameHead:]
		n = min(n, len(in))
		transport := in[:n]
		in = in[n:]
		// Steps of up to 255 µs, or of up to 255 ms: time bins, idle
		// flows and the ECN window all come into play.
		if step&0x80 != 0 {
			ts = ts.Add(time.Duration(step&0x7f) * time.Millisecond)
		} else {
			ts = ts.Add(time.Duration(step) * time.Microsecond)
		}
		if hosts&0x40 != 0 { // a PFC frame first, pausing the priorities in tos
			if err := w.WritePacket(ts, fuzzPFC(tos), 60); err != nil {
				t.Fatal(err)
			}
		}
		v6 := hosts&0x80 != 0
		frame := fuzzFrame(hosts&3, hosts>>2&3, tos, v6, how&1 != 0, transport)
		head := 14 + 20 + 8
		if v6 {
			head += 20
		}
		if hosts&0x10 != 0 { // in an 802.1Q tag, PCP from the DSCP
			frame = slices.Insert(frame, 12, 0x81, 0, tos>>5<<5, 100)
			head += 4
		}
		capLen := len(frame)
		if how&2 != 0 { // cut by a snap length
			capLen = min(capLen, head+int(how>>2))
		}
		if err := w.WritePacket(ts, frame[:capLen], len(frame)); err != nil {
			t.Fatal(err)
		}
		if hosts&0x20 != 0 { // and a copy of it mirrored by ERSPAN II
			m := fuzzERSPAN2(frame[:capLen], uint32(frames))
			if err := w.WritePacket(ts.Add(time.Microsecond), m, len(m)+len(frame)-capLen); err != nil {
				t.Fatal(err)
			}
		}
		frames++
	}
	if frames == 0 {
		return false
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return true
}

// fuzzFrame is an Ethernet frame of a RoCEv2 datagram from host src to
// host dst (10.0.0.1 to 10.0.0.4, or fd00::1 to fd00::4 over IPv6) with
// the given IP TOS byte (traffic class), carrying
// transport (from the BTH on) and an ICRC trailer, right or not.
func fuzzFrame(src, dst, tos byte, v6, badICRC bool, transport []byte) []byte {
	udpLen := 8 + len(transport) + bth.ICRCLen
	frame := make([]byte, 14, 14+40+udpLen)
	copy(frame, []byte{0x02, 0, 0, 0, 0, dst + 1, 0x02, 0, 0, 0, 0, src + 1, 0x08, 0x00})
	if v6 { // fd00::1 to fd00::4, flow label 0x12345
		frame[12], frame[13] = 0x86, 0xdd
		ip := binary.BigEndian.AppendUint32(nil, 6<<28|uint32(tos)<<20|0x12345)
		ip = binary.BigEndian.AppendUint16(ip, uint16(udpLen))
		ip = append(ip, 17, 64, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, src+1)
		ip = append(ip, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, dst+1)
		frame = append(frame, ip...)
	} else {
		ip := binary.BigEndian.AppendUint16([]byte{0x45, tos}, uint16(20+udpLen))
		// The header checksum stays 0: rocedump does not check it, and
		// the ICRC leaves it out.
		ip = append(ip, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, src+1, 10, 0, 0, dst+1)
		frame = append(frame, ip...)
	}
	frame = binary.BigEndian.AppendUint16(frame, 49152+uint16(src)<<4|uint16(dst))
	frame = binary.BigEndian.AppendUint16(frame, 4791)
	frame = binary.BigEndian.AppendUint16(frame, uint16(udpLen))
	frame = append(frame, 0, 0)
	frame = append(frame, transport...)
	frame = append(frame, 0, 0, 0, 0)
	if icrc, err := bth.ICRCv2(frame[14:]); err == nil {
		if badICRC {
			icrc = ^icrc
		}
		binary.LittleEndian.PutUint32(frame[len(frame)-bth.ICRCLen:], icrc)
	}
	return frame
}

// fuzzPFC is an 802.1Qbb PFC frame pausing the priorities set in
// enable, each for a number of quanta of its own.
func fuzzPFC(enable byte) []byte {
	b := []byte{0x01, 0x80, 0xc2, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x09, 0x88, 0x08, 0x01, 0x01, 0, enable}
	for i := range 8 {
		b = binary.BigEndian.AppendUint16(b, uint16(i+1)*0x100)
	}
	return append(b, make([]byte, 60-len(b))...)
}

// fuzzERSPAN2 is inner mirrored by ERSPAN type II (GRE with a sequence
// number, session 1) from 10.9.0.1 to 10.9.0.2.
func fuzzERSPAN2(inner []byte, seq uint32) []byte {
	b := []byte{0x02, 0, 0, 0, 0x09, 0x02, 0x02, 0, 0, 0, 0x09, 0x01, 0x08, 0x00}
	b = binary.BigEndian.AppendUint16(append(b, 0x45, 0), uint16(20+8+8+len(inner)))
	b = append(b, 0, 0, 0x40, 0, 64, 47, 0, 0, 10, 9, 0, 1, 10, 9, 0, 2)
	b = binary.BigEndian.AppendUint32(append(b, 0x10, 0, 0x88, 0xbe), seq)
	b = append(b, 0x10, 0, 0, 0x01, 0, 0, 0, 0) // version 1, VLAN 0, session 1, index 0
	return append(b, inner...)
}

// fuzzAnalysisSeeds are inputs the fuzzer starts from: a WRITE exchange
// with its ACK, a NAK and the resend it asks for, an RNR NAK, a CNP, a READ
// and its responses, and a CM REQ/REP on QP1.
func fuzzAnalysisSeeds() [][]byte {
	bthOf := func(op byte, qp, psn uint32, ext ...byte) []byte {
		b := []byte{op, 0, 0xff, 0xff, 0, byte(qp >> 16), byte(qp >> 8), byte(qp), 0, byte(psn >> 16), byte(psn >> 8), byte(psn)}
		return append(b, ext...)
	}
	frame := func(src, dst, step, tos byte, transport []byte) []byte {
		return append([]byte{src | dst<<2, step, tos, 0, byte(len(transport))}, transport...)
	}
	reth := []byte{0, 0, 0x7f, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0x40, 0}
	aeth := func(syndrome byte, msn uint32) []byte {
		return []byte{syndrome, byte(msn >> 16), byte(msn >> 8), byte(msn)}
	}
	payload := bytes.Repeat([]byte{0xab}, 16)
	var seeds [][]byte
	var s []byte
	// RDMA WRITE FIRST, MIDDLE, LAST from host 0 to 1 on QP 0x101 and the
	// ACK back on QP 0x201; the same again with a PSN gap and a NAK.
	s = append(s, frame(0, 1, 1, 0x6a, append(bthOf(0x06, 0x101, 100, reth...), payload...))...)
	s = append(s, frame(0, 1, 1, 0x6a, append(bthOf(0x07, 0x101, 101), payload...))...)
	s = append(s, frame(0, 1, 1, 0x6a, append(bthOf(0x08, 0x101, 102), payload...))...)
	s = append(s, frame(1, 0, 2, 0x68, bthOf(0x11, 0x201, 102, aeth(0x1f, 1)...))...)
	seeds = append(seeds, s)
	s = append([]byte{}, s...)
	s = append(s, frame(0, 1, 1, 0x6b, append(bthOf(0x0a, 0x101, 105, reth...), payload...))...) // WRITE ONLY past a gap, CE
	s = append(s, frame(1, 0, 1, 0x68, bthOf(0x11, 0x201, 103, aeth(0x60, 1)...))...)            // NAK: PSN sequence error
	s = append(s, frame(1, 0, 1, 0xc0, bthOf(0x81, 0x101, 0, make([]byte, 16)...))...)           // CNP
	s = append(s, frame(0, 1, 1, 0x6a, append(bthOf(0x0a, 0x101, 103, reth...), payload...))...) // resend
	s = append(s, frame(1, 0, 0x81, 0x68, bthOf(0x11, 0x201, 104, aeth(0x2e, 2)...))...)         // RNR NAK
	seeds = append(seeds, s)
	// RDMA READ request from host 2 to 3 and its responses.
	s = nil
	s = append(s, frame(2, 3, 1, 0x6a, bthOf(0x0c, 0x301, 7, reth...))...)
	s = append(s, frame(3, 2, 1, 0x6a, append(bthOf(0x0d, 0x401, 7, aeth(0x1f, 1)...), payload...))...)
	s = append(s, frame(3, 2, 1, 0x6a, append(bthOf(0x0e, 0x401, 8), payload...))...)
	s = append(s, frame(3, 2, 1, 0x6a, append(bthOf(0x0f, 0x401, 9, aeth(0x1f, 1)...), payload...))...)
	seeds = append(seeds, s)
	// A CM REQ and REP (UD SEND ONLY to QP1: DETH, then a MAD).
	// The MAD header, then the REQ or REP fields (IBTA 12.6.5, 12.6.8).
	mad := func(attr bth.CMAttribute, localComm, remoteComm uint32, qpn uint32) []byte {
		m := make([]byte, fuzzMaxBTHPart-20)
		m[0], m[1], m[2], m[3] = 1, bth.MgmtClassCM, 2, 3 // base version, class, class version, method Send
		binary.BigEndian.PutUint16(m[16:], uint16(attr))
		binary.BigEndian.PutUint32(m[24:], localComm)
		if attr == bth.CMAttrREQ {
			binary.BigEndian.PutUint64(m[32:], 0x0106<<16|4420) // IP CM service ID: TCP port space, NVMe-oF
			binary.BigEndian.PutUint32(m[56:], qpn<<8)
		} else {
			binary.BigEndian.PutUint32(m[28:], remoteComm)
			binary.BigEndian.PutUint32(m[36:], qpn<<8)
		}
		return m
	}
	deth := []byte{0x80, 0x01, 0, 0, 0, 0, 0, 1}
	s = nil
	s = append(s, frame(0, 2, 1, 0x00, append(bthOf(0x64, 1, 0, deth...), mad(bth.CMAttrREQ, 0x11, 0, 0x501)...))...)
	s = append(s, frame(2, 0, 1, 0x00, append(bthOf(0x64, 1, 0, deth...), mad(bth.CMAttrREP, 0x22, 0x11, 0x601)...))...)
	s = append(s, frame(0, 2, 1, 0x6a, append(bthOf(0x04, 0x601, 0), payload...))...)
	seeds = append(seeds, s)
	// The WRITE exchange again, tagged, mirrored by ERSPAN II, and with a
	// PFC frame before the ACK.
	s = nil
	s = append(s, frame(0|0x10|0x20, 1, 1, 0x6a, append(bthOf(0x06, 0x101, 100, reth...), payload...))...)
	s = append(s, frame(0|0x20, 1, 1, 0x6a, append(bthOf(0x07, 0x101, 101), payload...))...)
	s = append(s, frame(0|0x10, 1, 1, 0x6a, append(bthOf(0x08, 0x101, 102), payload...))...)
	s = append(s, frame(1|0x40, 0, 2, 0x68, bthOf(0x11, 0x201, 102, aeth(0x1f, 1)...))...)
	seeds = append(seeds, s)
	// The NAK exchange over IPv6.
	s = nil
	for in := seeds[1]; len(in) >= fuzzFrameHead; {
		n := fuzzFrameHead + int(in[4])
		s = append(append(s, in[0]|0x80), in[1:n]...)
		in = in[n:]
	}
	seeds = append(seeds, s)
	return seeds
}
