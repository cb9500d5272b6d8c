package reports

import (
	"strings"
	"testing"
)

// TestStorageCMCut: RDMA CM connection requests the snap length cut
// before their service ID cannot be told to be storage or not: the
// storage finding says how many, or, when no request could be
// classified, an info finding says storage over RDMA CM was not judged.
// Before, a capture cut at 100 bytes with an NVMe-oF connection made no
// storage finding, and one with another, whole, interface counted the
// whole request only without a word of the cut one.
func TestStorageCMCut(t *testing.T) {
	cut := storageWhereFindings(t, `name: storage-cm-cut
start: 2026-11-02T10:00:00Z
snaplen: 100
cm:
  - {name: nvmeof, client: 10.0.1.1, server: 10.100.255.10, port: 4420, client_qpn: 0x171, server_qpn: 0x271, client_psn: 1000, server_psn: 2000, at_us: 0, disconnect: false}
`)
	var got *Finding
	for i := range cut {
		if _, ok := cut[i].Evidence.Counts["cm_requests_unclassified"]; ok {
			got = &cut[i]
		}
	}
	if got == nil {
		t.Fatalf("cut: no finding counts cm_requests_unclassified:%s", summary(cut))
	}
	wantCounts(t, *got, map[string]float64{"cm_requests_unclassified": 1})
	if got.Severity != Info || got.Title != "Storage over RDMA CM not judged: 1 connection request cut before its service ID" {
		t.Errorf("cut: %s", summary([]Finding{*got}))
	}
	if v := variantOf(got); v != "cm_cut" {
		t.Errorf("cut: variant %q, want cm_cut", v)
	}

	both := storageWhereFindings(t, `name: storage-cm-cut-one
start: 2026-11-02T10:00:00Z
format: pcapng
interfaces:
  - {name: cut, snaplen: 100}
  - {name: whole}
cm:
  - {name: nvmeof-cut, client: 10.0.1.1, server: 10.100.255.10, port: 4420, client_qpn: 0x171, server_qpn: 0x271, client_psn: 1000, server_psn: 2000, at_us: 0, disconnect: false, interface: cut}
  - {name: nvmeof, client: 10.0.2.1, server: 10.100.255.10, port: 4420, client_qpn: 0x172, server_qpn: 0x272, client_psn: 3000, server_psn: 4000, at_us: 10, disconnect: false, interface: whole}
`)
	if len(both) == 0 || both[0].Evidence.Counts["cm_requests"] != 1 {
		t.Fatalf("both: want the RDMA CM finding first, with 1 request, got %s", summary(both))
	}
	wantCounts(t, both[0], map[string]float64{"cm_requests": 1, "cm_requests_unclassified": 1})
	if !strings.Contains(both[0].Detail, "1 more connection request was cut by the snap length before its service ID") {
		t.Errorf("both: detail %q", both[0].Detail)
	}
	for _, f := range both[1:] {
		if _, ok := f.Evidence.Counts["cm_requests_unclassified"]; ok {
			t.Errorf("both: a second finding counts the cut request: %s", summary([]Finding{f}))
		}
	}
}
