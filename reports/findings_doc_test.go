package reports

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/gen"
)

// findingsDoc is the document of every finding kind and evidence count.
const findingsDoc = "../docs/FINDINGS.md"

// TestFindingsDoc holds docs/FINDINGS.md to the code: every evidence count
// name a module can set is in the doc under its finding kind, and every
// name the doc lists is one the code sets for that kind. The names come
// from two sources that check each other:
//
//   - a scan of the module sources (reports/*.go but merge*.go, which only
//     recombines the modules' names): every key of a map[string]float64
//     literal and every index assigned into a map[string]float64 made in
//     the function or into an Evidence's Counts. A key that is not a
//     string literal must be one of dynamicCountNames, which spells out
//     its names. A function's kind is the Kind constant it names (or, for
//     a helper that names none, that of its callers);
//   - the findings of Run over every generated capture (with and without
//     the report_pod topology) and a few inputs made here for the rarest
//     counts (docCountInputs). Every name they emit must be one the scan
//     found, and every name the scan found must be emitted by one of them,
//     so that neither can miss a name unnoticed.
//
// Names with a variable part are written in the doc as patterns:
// priority_<p>_frames (p = 0..7), cm_requests_<port>, flows_<port>.
//
// It also checks the doc's merge column against the rule rocedump merge
// applies to each count (countRuleOf, recomputed kinds).
func TestFindingsDoc(t *testing.T) {
	doc := docCountNames(t)
	scanned := scanCountNames(t)
	emitted := emittedCountNames(t)
	kinds := allKinds(t)

	for _, k := range kinds {
		for name := range emitted[k] {
			if _, ok := scanned[k][name]; !ok {
				t.Errorf("%s: count %q is emitted but the source scan does not find it: teach scanCountNames how it is set", k, name)
			}
		}
		for _, name := range sortedKeys(scanned[k]) {
			if _, ok := doc[k][name]; !ok {
				t.Errorf("%s: count %q (set at %s) is not in %s under ## `%s`", k, name, scanned[k][name], findingsDoc, k)
			}
			if !emitted[k][name] {
				t.Errorf("%s: count %q (set at %s) is emitted by no test input: add an input that raises it to docCountInputs", k, name, scanned[k][name])
			}
		}
		for _, name := range sortedKeys(doc[k]) {
			if _, ok := scanned[k][name]; !ok {
				t.Errorf("%s: %s lists count %q, which the code never sets for this kind", k, findingsDoc, name)
			}
		}
	}
	for k := range doc {
		if !slices.Contains(kinds, k) {
			t.Errorf("%s: section ## `%s` is not a finding kind", findingsDoc, k)
		}
	}
	checkMergeColumn(t, doc)
}

// docCount is one row of a count table of the doc.
type docCount struct {
	line  int
	merge string // the merge column
}

// docCountNames reads the count tables of the doc: under a heading
// "## `kind`", every table whose header starts "| count |"; its rows start
// with the count name in backquotes. A name may have a row in several
// variants of its kind.
func docCountNames(t *testing.T) map[Kind]map[string][]docCount {
	t.Helper()
	f, err := os.Open(findingsDoc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	heading := regexp.MustCompile("^## `([a-z_]+)`$")
	row := regexp.MustCompile("^\\| `([a-z0-9_<>]+)` \\|")
	out := map[Kind]map[string][]docCount{}
	var kind Kind
	inTable := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			kind, inTable = "", false
			if m := heading.FindStringSubmatch(line); m != nil {
				kind = Kind(m[1])
			}
		case strings.HasPrefix(line, "| count |"):
			inTable = kind != ""
		case !strings.HasPrefix(line, "|"):
			inTable = false
		case inTable && strings.HasPrefix(line, "|---"):
		case inTable:
			m := row.FindStringSubmatch(line)
			cells := strings.Split(strings.Trim(line, "| "), " | ")
			if m == nil || len(cells) != 4 {
				t.Errorf("%s:%d: want a row | `name` | meaning | unit | merge |, got %q", findingsDoc, n, line)
				continue
			}
			if out[kind] == nil {
				out[kind] = map[string][]docCount{}
			}
			out[kind][m[1]] = append(out[kind][m[1]], docCount{line: n, merge: cells[3]})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// docPattern writes an emitted count name as the doc does.
func docPattern(name string) string {
	name = priorityRE.ReplaceAllString(name, "priority_<p>_")
	return portRE.ReplaceAllString(name, "${1}_<port>")
}

var (
	priorityRE = regexp.MustCompile(`^priority_[0-7]_`)
	portRE     = regexp.MustCompile(`^(cm_requests|flows)_[0-9]+$`)
)

// dynamicCountNames spells out the count names of the keys that are not
// string literals, by the key's source text.
var dynamicCountNames = map[string]func() []string{
	`"naks_" + code.String()`: func() []string {
		var out []string
		for _, c := range fatalNAKCodes {
			out = append(out, "naks_"+c.String())
		}
		return out
	},
	`strings.ToLower(class) + "_packets"`: func() []string { return []string{"data_packets", "cnp_packets"} },
	`pfx + "frames"`:                      func() []string { return []string{"priority_<p>_frames"} },
	`pfx + "xoff"`:                        func() []string { return []string{"priority_<p>_xoff"} },
	`pfx + "xon"`:                         func() []string { return []string{"priority_<p>_xon"} },
	`pfx + "pause_quanta"`:                func() []string { return []string{"priority_<p>_pause_quanta"} },
	`pfx + "paused_us"`:                   func() []string { return []string{"priority_<p>_paused_us"} },
	`pfx + "storms"`:                      func() []string { return []string{"priority_<p>_storms"} },
	`fmt.Sprintf("cm_requests_%d", port)`: func() []string { return []string{"cm_requests_<port>"} },
	`fmt.Sprintf("flows_%d", port)`:       func() []string { return []string{"flows_<port>"} },
	`key + "_conversations"`:              func() []string { return storageIPCounts("_conversations") },
	`key + "_bytes"`:                      func() []string { return storageIPCounts("_bytes") },
}

func storageIPCounts(suffix string) []string {
	var out []string
	for _, n := range storageIPNames {
		out = append(out, storageIPKey(n)+suffix)
	}
	return out
}

// scanCountNames finds the count names the module sources set, by kind,
// with where each is set.
func scanCountNames(t *testing.T) map[Kind]map[string]string {
	t.Helper()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	kindConst := map[string]Kind{} // KindRetransmission -> "retransmission"
	type fn struct {
		kinds map[Kind]bool
		calls map[string]bool
		keys  []ast.Expr
	}
	funcs := map[string]*fn{}
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") || strings.HasPrefix(p, "merge") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Kind" {
					continue
				}
				for i, name := range vs.Names {
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
						v, _ := strconv.Unquote(lit.Value)
						kindConst[name.Name] = Kind(v)
					}
				}
			}
		}
	}
	if len(kindConst) == 0 {
		t.Fatal("found no Kind constants")
	}
	isCountsMap := func(e ast.Expr) bool {
		m, ok := e.(*ast.MapType)
		if !ok {
			return false
		}
		k, ok1 := m.Key.(*ast.Ident)
		v, ok2 := m.Value.(*ast.Ident)
		return ok1 && ok2 && k.Name == "string" && v.Name == "float64"
	}
	makesCountsMap := func(e ast.Expr) bool {
		switch e := e.(type) {
		case *ast.CompositeLit:
			return isCountsMap(e.Type)
		case *ast.CallExpr:
			id, ok := e.Fun.(*ast.Ident)
			return ok && id.Name == "make" && len(e.Args) > 0 && isCountsMap(e.Args[0])
		}
		return false
	}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			x := &fn{kinds: map[Kind]bool{}, calls: map[string]bool{}}
			funcs[fd.Name.Name] = x
			maps := map[string]bool{} // local variables holding a counts map
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.Ident:
					if k, ok := kindConst[n.Name]; ok {
						x.kinds[k] = true
					}
				case *ast.CallExpr:
					if id, ok := n.Fun.(*ast.Ident); ok {
						x.calls[id.Name] = true
					}
				case *ast.CompositeLit:
					if isCountsMap(n.Type) {
						for _, e := range n.Elts {
							if kv, ok := e.(*ast.KeyValueExpr); ok {
								x.keys = append(x.keys, kv.Key)
							}
						}
					}
				case *ast.AssignStmt:
					for i, l := range n.Lhs {
						if id, ok := l.(*ast.Ident); ok && i < len(n.Rhs) && makesCountsMap(n.Rhs[i]) {
							maps[id.Name] = true
						}
						ix, ok := l.(*ast.IndexExpr)
						if !ok {
							continue
						}
						switch m := ix.X.(type) {
						case *ast.SelectorExpr:
							if m.Sel.Name == "Counts" {
								x.keys = append(x.keys, ix.Index)
							}
						case *ast.Ident:
							if maps[m.Name] {
								x.keys = append(x.keys, ix.Index)
							}
						}
					}
				}
				return true
			})
		}
	}
	// kindsOf is a function's kinds: those it names, else its callers'.
	var kindsOf func(name string, seen map[string]bool) map[Kind]bool
	kindsOf = func(name string, seen map[string]bool) map[Kind]bool {
		if len(funcs[name].kinds) > 0 {
			return funcs[name].kinds
		}
		seen[name] = true
		out := map[Kind]bool{}
		for caller, c := range funcs {
			if c.calls[name] && !seen[caller] {
				for k := range kindsOf(caller, seen) {
					out[k] = true
				}
			}
		}
		return out
	}
	out := map[Kind]map[string]string{}
	for _, name := range sortedKeys(funcs) {
		x := funcs[name]
		if len(x.keys) == 0 {
			continue
		}
		ks := kindsOf(name, map[string]bool{})
		if len(ks) != 1 {
			t.Errorf("%s sets evidence counts but its finding kind is not clear (kinds %v): name one Kind constant in it", name, ks)
			continue
		}
		var kind Kind
		for k := range ks {
			kind = k
		}
		for _, key := range x.keys {
			at := fset.Position(key.Pos()).String()
			var names []string
			if lit, ok := key.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				v, _ := strconv.Unquote(lit.Value)
				names = []string{v}
			} else if spell := dynamicCountNames[types.ExprString(key)]; spell != nil {
				names = spell()
			} else {
				t.Errorf("%s: count name %s is not a string literal: add it to dynamicCountNames (and the doc)", at, types.ExprString(key))
				continue
			}
			if out[kind] == nil {
				out[kind] = map[string]string{}
			}
			for _, n := range names {
				if _, ok := out[kind][n]; !ok {
					out[kind][n] = at
				}
			}
		}
	}
	return out
}

// emittedCountNames runs every module over docCountInputs and returns the
// count names of their findings, by kind, as the doc writes them.
func emittedCountNames(t *testing.T) map[Kind]map[string]bool {
	t.Helper()
	out := map[Kind]map[string]bool{}
	for _, in := range docCountInputs(t) {
		for _, f := range Run(in, "test").Findings {
			if out[f.Kind] == nil {
				out[f.Kind] = map[string]bool{}
			}
			for name := range f.Evidence.Counts {
				out[f.Kind][docPattern(name)] = true
			}
		}
	}
	return out
}

// docCountInputs are inputs that raise every finding and set every count:
// every generated capture, without and with a topology, and inputs for
// what none of them has.
func docCountInputs(t *testing.T) []*Input {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(genDir, "*.pcap*"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("generated captures: %v %v", paths, err)
	}
	var ins []*Input
	for _, p := range paths {
		ins = append(ins, loadInput(t, p, ""), loadInput(t, p, filepath.Join(topoDir, pod)))
	}
	// A live capture's drops, its interface down once, and frames of a
	// link type it cannot read.
	in := loadGen(t, "clean_allreduce", "")
	in.Capture.Drops = &Drops{Kernel: 3, Interface: 1}
	in.Capture.Problems = append(in.Capture.Problems, LinkDownNote+"eth1 was down for 0.5 s, from 04:53:12.500 to 04:53:13.000 UTC: nothing was captured then")
	in.Capture.Unsupported = 2
	ins = append(ins, in)
	// ACKs captured before the requests they acknowledge.
	ins = append(ins, earlyInput(-20*time.Microsecond))
	// Two files taken in parallel: each packet in both.
	ins = append(ins, parallelInput(700*time.Microsecond))
	// And a TCP connection's packets in both.
	ins = append(ins, parallelConvInput())
	// NFS's helpers: rpcbind, mountd.
	ins = append(ins, docScenario(t, `
name: doc_nfs_helpers
tcp:
  - {name: rpcbind, client: 10.0.1.1, server: 10.100.255.22, port: 111, client_port: 50000, bytes: 100, resp_bytes: 100, at_us: 10}
  - {name: mountd, client: 10.0.1.1, server: 10.100.255.22, port: 20048, client_port: 706, bytes: 200, resp_bytes: 300, at_us: 20}
`))
	// Pauses of a priority without RoCE: RoCE tagged on priority 3,
	// XOFFs on 4.
	ins = append(ins, docScenario(t, `
name: doc_pfc_without_roce
encap: [{vlan: 100, pcp: 3}]
flows:
  - {src: 10.0.0.1, dst: 10.0.0.2, src_qpn: 0x100, dest_qpn: 0x200, ops: [{op: write, bytes: 8192}]}
pfc:
  - {priorities: [4], quanta: 1000, count: 2, at_us: 10, interval_us: 5}
`))
	// Frames cut inside their BTH.
	ins = append(ins, docScenario(t, `
name: doc_bth_cut
snaplen: 100
encap: [{erspan2: {session: 7}}, {vlan: 100}]
flows:
  - {src: 10.0.0.1, dst: 10.0.0.2, src_qpn: 0x100, dest_qpn: 0x200, ops: [{op: write, bytes: 8192}]}
`))
	// Frames cut before their UDP header: ERSPAN III over IPv6 with its
	// platform subheader is 136 bytes to the end of the inner IPv6 header.
	ins = append(ins, docScenario(t, `
name: doc_headers_cut
snaplen: 128
encap: [{erspan3: {src: "2001:db8:ffff::1", dst: "2001:db8:ffff::100", session: 300, hw_id: 5, subheader: true}}]
flows:
  - {src: "fd00:0:0:1::1", dst: "fd00:0:0:1::2", src_qpn: 0x131, dest_qpn: 0x231, ops: [{op: write, bytes: 4096}]}
`))
	// A NAK with a reserved code, and CM datagrams cut before their
	// service ID (42 bytes of headers, 20 of BTH and DETH, 24 of MAD
	// header, 4 of communication ID: 90 < 100 < 102).
	ins = append(ins, docScenario(t, `
name: doc_reserved_nak_cm_cut
snaplen: 100
cm:
  - {name: nvmeof, client: 10.1.0.1, server: 10.1.0.100, port: 4420, client_qpn: 0x171, server_qpn: 0x271, client_psn: 1000, server_psn: 2000, at_us: 0, disconnect: false}
flows:
  - {name: nak-reserved, src: 10.0.4.1, dst: 10.0.4.2, src_qpn: 0x105, dest_qpn: 0x205, start_psn: 500, mtu: 1024, start_us: 100,
     ops: [{op: send, bytes: 64, count: 3}], events: [{at_msg: 2, nak: reserved_5}]}
`))
	// CNPs tagged off the CNP priority (pcp_mismatch's cnp_packets): the
	// generated captures put theirs on priority 6, or carry no tag.
	ins = append(ins, docScenario(t, `
name: doc_cnp_pcp
encap: [{vlan: 100, pcp: 3}]
flows:
  - {src: 10.0.1.1, dst: 10.0.1.2, src_qpn: 0x303, dest_qpn: 0x403, mtu: 4096, ops: [{op: write, bytes: 65536}],
     events: [{at_msg: 1, ce_mark: {packets: 2, cnp: true}}]}
`))
	// SMB over TCP (smb_conversations), in no generated capture.
	ins = append(ins, docScenario(t, `
name: doc_smb
tcp:
  - {name: smb, client: 10.0.2.1, server: 10.0.2.2, port: 445, client_port: 50001, bytes: 3000, resp_bytes: 300}
`))
	// CNPs over 2 s: time bins wider than a millisecond (peak_cnps_bin_ms).
	s := &synth{t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	in = &Input{Config: Config{}.WithDefaults()}
	c := NewCollector(flows.NewTable(flows.Config{}), in.Config)
	for us := 0.0; us <= 2e6; us += 5000 {
		c.Add(roce("10.0.0.2", "10.0.0.1", 0x100, opCNP, 0, 48, 0), s.ref(us))
	}
	c.Finish()
	in.Collect, in.Flows = c, c.Table.Flows()
	ins = append(ins, in)
	// Requests out of PSN order with nothing lost (reordering).
	ins = append(ins, reorderInput(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 0x200, true))
	return ins
}

// docScenario generates a scenario and loads it without a topology.
func docScenario(t *testing.T, yaml string) *Input {
	t.Helper()
	sc, err := gen.ParseScenario([]byte(yaml), "doc.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return loadInput(t, writeScenario(t, sc), "")
}

// allKinds lists the finding kinds (the JSON schema's enum).
func allKinds(t *testing.T) []Kind {
	t.Helper()
	return []Kind{KindRetransmission, KindMirrorLoss, KindCongestion, KindECNNotActed, KindDSCPMismatch, KindPCPMismatch, KindPFC, KindCrossRail,
		KindRDMAOnManagement, KindStorageOnCompute, KindNonRDMAOnCompute, KindFanOut, KindCaptureHealth, KindReordering}
}

// checkMergeColumn checks what the doc says rocedump merge does with each
// count: "recomputed" for the kinds merge computes again from flow records
// only; for the others the rule countRuleOf gives the name ("sum", "max",
// "min", "max of means"), unless the doc says the count is a "total" put
// back from the flow records or "derived" from other counts (the few
// merge.go and merge_combined.go make), or, for a recomputed kind, that it
// is "recomputed".
func checkMergeColumn(t *testing.T, doc map[Kind]map[string][]docCount) {
	t.Helper()
	word := map[countRule]string{countSum: "sum", countMax: "max", countMin: "min", countMean: "max of means"}
	for kind, names := range doc {
		for name, rows := range names {
			for _, r := range rows {
				col := r.merge
				var ok bool
				switch {
				case slices.Contains(recordKinds, kind):
					ok = strings.HasPrefix(col, "recomputed")
				case slices.Contains(RecomputedKinds, kind) && strings.HasPrefix(col, "recomputed"):
					ok = true
				case strings.HasPrefix(col, "total") || strings.HasPrefix(col, "derived"):
					ok = !slices.Contains(RecomputedKinds, kind)
				default:
					w := word[countRuleOf(name)]
					ok = col == w || strings.HasPrefix(col, w+" (") || strings.HasPrefix(col, w+":")
				}
				if !ok {
					t.Errorf("%s:%d: %s %s: merge column %q does not say what merge does (countRuleOf: %s)",
						findingsDoc, r.line, kind, name, col, word[countRuleOf(name)])
				}
			}
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
