package gen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Scenario is a parsed scenario file. The YAML keys are documented in the
// package comment; every field here carries its key in a yaml tag.
type Scenario struct {
	Name        string    `yaml:"name"`
	Description string    `yaml:"description"`
	Seed        uint64    `yaml:"seed"`
	Start       time.Time `yaml:"start"`
	Format      string    `yaml:"format"`    // pcap, pcap-ns, pcap-be, pcap-ns-be, pcapng, pcapng-be
	Gzip        bool      `yaml:"gzip"`      // gzip the whole capture
	Snaplen     int       `yaml:"snaplen"`   // 0: whole frames
	Link        string    `yaml:"link"`      // ethernet, raw, sll, sll2
	Encap       []Encap   `yaml:"encap"`     // outermost first
	LinkGbps    float64   `yaml:"link_gbps"` // serialisation rate for packet spacing, default 400
	DSCP        *int      `yaml:"dscp"`      // default DSCP for RoCE data, default 26
	ECN         string    `yaml:"ecn"`       // default ECN for RoCE data: not_ect, ect0 (default), ect1, ce
	CNPDSCP     *int      `yaml:"cnp_dscp"`  // DSCP of CNPs, default 48
	CNPPCP      *int      `yaml:"cnp_pcp"`   // priority of the innermost vlan tag of CNPs, default the tag's pcp

	Interfaces []Interface  `yaml:"interfaces"` // pcapng only; default one interface from link/encap/snaplen
	Flows      []Flow       `yaml:"flows"`
	CM         []CM         `yaml:"cm"`
	TCP        []TCPSession `yaml:"tcp"`
	PFC        []PFC        `yaml:"pfc"`
	Malformed  []Malformed  `yaml:"malformed"`
	CutOff     *CutOff      `yaml:"cut_off"`
}

// Interface is one capture interface of a pcapng file.
type Interface struct {
	Name    string  `yaml:"name"`
	Link    string  `yaml:"link"`
	Snaplen *int    `yaml:"snaplen"` // default: the scenario's snaplen
	Encap   []Encap `yaml:"encap"`   // default: the scenario's encap
}

// Encap is one wrapper around every frame. Exactly one of VLAN, QinQ,
// ERSPAN1, ERSPAN2, ERSPAN3, GRETEB and VXLAN is set.
type Encap struct {
	VLAN    *int    `yaml:"vlan"` // 802.1Q VLAN ID
	PCP     int     `yaml:"pcp"`  // priority of the vlan tag
	QinQ    []int   `yaml:"qinq"` // [S-VLAN, C-VLAN]: 802.1ad + 802.1Q
	ERSPAN1 *Tunnel `yaml:"erspan1"`
	ERSPAN2 *Tunnel `yaml:"erspan2"`
	ERSPAN3 *Tunnel `yaml:"erspan3"`
	GRETEB  *Tunnel `yaml:"gre_teb"`
	VXLAN   *Tunnel `yaml:"vxlan"`
}

// Tunnel is the outer IP path of a mirror session or overlay.
type Tunnel struct {
	Src       netip.Addr `yaml:"src"`       // default 192.0.2.1 (2001:db8:ffff::1 with ipv6)
	Dst       netip.Addr `yaml:"dst"`       // default 192.0.2.2 (2001:db8:ffff::2 with ipv6)
	IPv6      bool       `yaml:"ipv6"`      // choose the IPv6 defaults
	Session   int        `yaml:"session"`   // ERSPAN session ID (10 bits)
	Index     int        `yaml:"index"`     // ERSPAN II index (20 bits)
	HWID      int        `yaml:"hw_id"`     // ERSPAN III hardware ID (6 bits)
	Subheader bool       `yaml:"subheader"` // ERSPAN III optional platform subheader (O bit)
	VNI       int        `yaml:"vni"`       // VXLAN network identifier
}

// Flow is one RDMA connection (a QP pair) and the work it carries.
type Flow struct {
	Name      string     `yaml:"name"`
	Src       netip.Addr `yaml:"src"`       // requester
	Dst       netip.Addr `yaml:"dst"`       // responder
	Transport string     `yaml:"transport"` // RC (default), UC, UD, XRC, RD
	RoCE      string     `yaml:"roce"`      // v2 (default) or v1
	SrcQPN    uint32     `yaml:"src_qpn"`
	DestQPN   uint32     `yaml:"dest_qpn"`
	StartPSN  uint32     `yaml:"start_psn"`
	PKey      *uint16    `yaml:"pkey"` // default 0xffff
	MTU       int        `yaml:"mtu"`  // 256, 512, 1024, 2048 or 4096 (default)
	UDPSport  int        `yaml:"udp_sport"`
	DSCP      *int       `yaml:"dscp"`
	ECN       string     `yaml:"ecn"`
	Interface string     `yaml:"interface"`
	QKey      uint32     `yaml:"qkey"`    // UD and RD
	XRCSRQ    uint32     `yaml:"xrc_srq"` // XRC
	EECnxt    uint32     `yaml:"ee_context"`
	StartUS   float64    `yaml:"start_us"`   // first message, microseconds after start
	RTTUS     float64    `yaml:"rtt_us"`     // round trip seen from the mirror, default 4
	TimeoutUS float64    `yaml:"timeout_us"` // requester retransmission timeout, default 4096
	AckEvery  int        `yaml:"ack_every"`  // responder ACKs every N packets too
	CNPOpcode *int       `yaml:"cnp_opcode"` // 0x81 (default) or 0x80
	MirrorDup *MirrorDup `yaml:"mirror_dup"` // the mirror delivers every frame of the flow twice
	Ops       []Op       `yaml:"ops"`
	Events    []Event    `yaml:"events"`
}

// MirrorDup makes the mirror deliver every frame of a flow, both ways,
// twice, as a SPAN session with overlapping sources does: the second copy
// DelayUS later, with the TTL (hop limit), DSCP and ECN a copy taken after
// the switch routed and perhaps marked it may carry. A copy with another
// TTL also has the router's source MAC address.
type MirrorDup struct {
	DelayUS float64 `yaml:"delay_us"` // the copy after the packet (default 0: right after it)
	TTL     *int    `yaml:"ttl"`      // the copy's IP TTL or GRH hop limit, default the packet's (64)
	DSCP    *int    `yaml:"dscp"`     // the copy's DSCP, default the packet's
	ECN     string  `yaml:"ecn"`      // the copy's ECN (not_ect, ect0, ect1, ce), default the packet's
}

// Op is a run of identical messages (work requests).
type Op struct {
	Op    string  `yaml:"op"`    // write, send, read, cmp_swap, fetch_add
	Bytes int     `yaml:"bytes"` // message length
	Count int     `yaml:"count"` // messages, default 1
	GapUS float64 `yaml:"gap_us"`
	Imm   bool    `yaml:"imm"` // WRITE/SEND with immediate
	Inv   bool    `yaml:"inv"` // SEND with invalidate
}

// Event is something that goes wrong with one message of a flow. Exactly one
// of the pointer fields is set.
type Event struct {
	AtMsg       int       `yaml:"at_msg"` // 1-based message number within the flow
	FabricDrop  *Drop     `yaml:"fabric_drop"`
	TimeoutDrop *Drop     `yaml:"timeout_drop"`
	MirrorDrop  *Drop     `yaml:"mirror_drop"`
	RNRNAK      *RNRNAK   `yaml:"rnr_nak"`
	NAK         *string   `yaml:"nak"`
	CEMark      *CEMark   `yaml:"ce_mark"`
	FECN        *FECNMark `yaml:"fecn"`
	DSCP        *int      `yaml:"dscp"`
}

// Drop selects data packets of a message: psn_offset is the first one
// (0-based within the message), packets how many (default 1).
type Drop struct {
	PSNOffset *int  `yaml:"psn_offset"`
	Packets   int   `yaml:"packets"`
	Seen      *bool `yaml:"seen"` // fabric/timeout drops: did the mirror see it before it was lost (default true)
}

// RNRNAK is a receiver-not-ready NAK for a message.
type RNRNAK struct {
	Timer int `yaml:"timer"` // 5-bit RNR timer code
}

// CEMark marks data packets ECN CE.
type CEMark struct {
	PSNOffset int  `yaml:"psn_offset"`
	Packets   int  `yaml:"packets"` // default 1
	CNP       bool `yaml:"cnp"`     // the notification point answers each with a CNP
	CNPOpcode *int `yaml:"cnp_opcode"`
	// Resends marks the packets' resends (go-back-N, timeout, RNR
	// retry, re-issued READ) instead of their first transmissions: a
	// queue that built up after them. No CNP answers them (cnp unset).
	Resends bool `yaml:"resends"`
}

// FECNMark sets the BTH FECN bit on data packets, and BECN on the answers.
type FECNMark struct {
	PSNOffset int  `yaml:"psn_offset"`
	Packets   int  `yaml:"packets"` // default 1
	BECN      bool `yaml:"becn"`    // the ACKs/responses of the message carry BECN
}

// CM is an RDMA CM connection handshake on QP1.
type CM struct {
	Name         string     `yaml:"name"`
	Client       netip.Addr `yaml:"client"`
	Server       netip.Addr `yaml:"server"`
	Port         int        `yaml:"port"`        // service port: 4420 NVMe-oF, 3260 iSER, 20049 NFS/RDMA, 5445 SMB Direct
	ClientPort   int        `yaml:"client_port"` // source port in the IP private data
	ClientQPN    uint32     `yaml:"client_qpn"`
	ServerQPN    uint32     `yaml:"server_qpn"`
	ClientPSN    uint32     `yaml:"client_psn"`
	ServerPSN    uint32     `yaml:"server_psn"`
	AtUS         float64    `yaml:"at_us"`
	Disconnect   *bool      `yaml:"disconnect"`    // DREQ/DREP, default true
	DisconnectUS float64    `yaml:"disconnect_us"` // after at_us, default 1000
	Interface    string     `yaml:"interface"`
}

// TCPSession is a plain TCP session: handshake, data both ways, FIN close.
type TCPSession struct {
	Name       string     `yaml:"name"`
	Client     netip.Addr `yaml:"client"`
	Server     netip.Addr `yaml:"server"`
	Port       int        `yaml:"port"`
	ClientPort int        `yaml:"client_port"`
	Bytes      int        `yaml:"bytes"`      // client to server
	RespBytes  int        `yaml:"resp_bytes"` // server to client
	MSS        int        `yaml:"mss"`        // default 1448
	AtUS       float64    `yaml:"at_us"`
	Interface  string     `yaml:"interface"`
}

// PFC is a run of priority flow control pause frames (IEEE 802.1Qbb).
type PFC struct {
	Src        string  `yaml:"src_mac"` // default 02:00:00:00:pf:01
	Priorities []int   `yaml:"priorities"`
	Quanta     *int    `yaml:"quanta"` // for every enabled priority, default 65535; 0 is an XON
	Count      int     `yaml:"count"`  // default 1
	AtUS       float64 `yaml:"at_us"`
	IntervalUS float64 `yaml:"interval_us"`
	Interface  string  `yaml:"interface"`
}

// Malformed injects bad frames.
type Malformed struct {
	Kind       string     `yaml:"kind"` // garbage_after_4791, short_bth, bad_icrc, reserved_opcode, bad_udp_len
	Count      int        `yaml:"count"`
	AtUS       float64    `yaml:"at_us"`
	IntervalUS float64    `yaml:"interval_us"`
	Src        netip.Addr `yaml:"src"`
	Dst        netip.Addr `yaml:"dst"`
	Bytes      int        `yaml:"bytes"` // garbage length
	Interface  string     `yaml:"interface"`
}

// CutOff cuts the capture in the middle of an extra final record.
type CutOff struct {
	Bytes int `yaml:"bytes"` // bytes missing from the end of the file
}

// ParseError is a scenario error with its position.
type ParseError struct {
	File string
	Line int    // 0 when unknown
	Path string // e.g. flows[1].events[0]
	Msg  string
}

func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// LoadScenario reads and parses a scenario file.
func LoadScenario(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseScenario(data, path)
}

var (
	yamlLineRE   = regexp.MustCompile(`^line (\d+): (.*)$`)
	yamlTypeRE   = regexp.MustCompile(`in type gen\.(\w+)`)
	yamlPrefixRE = regexp.MustCompile(`^yaml: (unmarshal errors:\n)?`)
	quotedRE     = regexp.MustCompile(`"([^"]+)"`)
)

// scalarLine is the line of the first scalar with value v, or 0.
func scalarLine(n *yaml.Node, v string) int {
	if n.Kind == yaml.ScalarNode && n.Value == v {
		return n.Line
	}
	for _, c := range n.Content {
		if l := scalarLine(c, v); l > 0 {
			return l
		}
	}
	return 0
}

// ParseScenario parses scenario YAML strictly (unknown keys are errors),
// fills defaults and validates it. name is used in error messages.
func ParseScenario(data []byte, name string) (*Scenario, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(name, err)
	}
	if len(root.Content) == 0 {
		return nil, &ParseError{File: name, Msg: "empty scenario"}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Scenario
	if err := dec.Decode(&s); err != nil {
		pe := yamlError(name, err)
		if pe.Line == 0 {
			// A TextUnmarshaler's error (an IP address) has no position:
			// find the scalar it quotes.
			if m := quotedRE.FindStringSubmatch(pe.Msg); m != nil {
				pe.Line = scalarLine(&root, m[1])
			}
		}
		return nil, pe
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, &ParseError{File: name, Line: extra.Line, Msg: "more than one YAML document"}
	}
	v := validator{file: name, root: root.Content[0]}
	v.scenario(&s)
	if v.err != nil {
		return nil, v.err
	}
	return &s, nil
}

// yamlError turns a yaml.v3 error into a ParseError with the first line number
// it names, and with the Go type names turned into scenario words.
func yamlError(file string, err error) *ParseError {
	msg := yamlPrefixRE.ReplaceAllString(err.Error(), "")
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
		if len(te.Errors) > 1 {
			msg += fmt.Sprintf(" (and %d more)", len(te.Errors)-1)
		}
	}
	msg = strings.TrimSpace(msg)
	msg = yamlTypeRE.ReplaceAllStringFunc(msg, func(m string) string {
		return "in " + sectionWord(yamlTypeRE.FindStringSubmatch(m)[1])
	})
	pe := &ParseError{File: file, Msg: msg}
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		fmt.Sscan(m[1], &pe.Line)
		pe.Msg = m[2]
	}
	return pe
}

func sectionWord(typ string) string {
	switch typ {
	case "Scenario":
		return "scenario (top level)"
	case "TCPSession":
		return "tcp session"
	case "CEMark":
		return "ce_mark"
	case "FECNMark":
		return "fecn"
	case "RNRNAK":
		return "rnr_nak"
	}
	return strings.ToLower(typ)
}
