package capture

import (
	"encoding/binary"
	"testing"
)

func TestLinkTypeString(t *testing.T) {
	tests := []struct {
		lt   LinkType
		want string
	}{
		{LinkTypeNull, "NULL (0)"},
		{LinkTypeEthernet, "EN10MB (1)"},
		{LinkTypeRaw, "RAW (101)"},
		{LinkTypeLoop, "LOOP (108)"},
		{LinkTypeLinuxSLL, "LINUX_SLL (113)"},
		{LinkTypeERF, "ERF (197)"},
		{LinkTypeIPv4, "IPV4 (228)"},
		{LinkTypeIPv6, "IPV6 (229)"},
		{LinkTypeIPoIB, "IPOIB (242)"},
		{LinkTypeInfiniBand, "INFINIBAND (247)"},
		{LinkTypeLinuxSLL2, "LINUX_SLL2 (276)"},
		{LinkTypeIEEE80211Radio, "IEEE802_11_RADIO (127)"},
		{50, "PPP_SERIAL (50)"},
		{12345, "LINKTYPE_12345"},
		{0xffffffff, "LINKTYPE_4294967295"},
	}
	for _, tt := range tests {
		if got := tt.lt.String(); got != tt.want {
			t.Errorf("LinkType(%d).String() = %q, want %q", uint32(tt.lt), got, tt.want)
		}
	}
}

func TestFormatString(t *testing.T) {
	tests := []struct {
		f    Format
		want string
	}{
		{Format{Kind: KindPcap, ByteOrder: binary.LittleEndian}, "pcap"},
		{Format{Kind: KindPcap, Nanosecond: true}, "pcap (ns)"},
		{Format{Kind: KindPcap, Nanosecond: true, Gzip: true}, "pcap (ns) (gzip)"},
		{Format{Kind: KindPcapNG, ByteOrder: binary.BigEndian}, "pcapng"},
		{Format{Kind: KindPcapNG, Gzip: true}, "pcapng (gzip)"},
	}
	for _, tt := range tests {
		if got := tt.f.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.f, got, tt.want)
		}
	}
}
