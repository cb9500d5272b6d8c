package filter

import (
	"fmt"
	"os"
	"testing"
)

func (p *program) dump() string {
	s := fmt.Sprintf("root %d\n", p.root)
	for i, in := range p.insns {
		s += fmt.Sprintf("%3d kind=%d rel=%v off=%d nl=%d size=%d mask=%#x op=%s k=%#x expr=%q jt=%d jf=%d\n", i, in.kind, in.rel, in.off, in.nl, in.size, in.mask, opNames[in.op], in.k, in.expr, in.jt, in.jf)
	}
	return s
}

func TestDbg(t *testing.T) {
	e := os.Getenv("DBGEXPR")
	if e == "" {
		t.Skip()
	}
	var lt uint32
	fmt.Sscan(os.Getenv("DBGLT"), &lt)
	tree, _ := parse(e)
	root, err := compileTree(tree, e, lt)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tree: %v", root)
	b := &builder{}
	r := b.build(root, termAccept, termReject)
	t.Logf("unopt:\n%s", b.compact(r).dump())
	t.Logf("opt:\n%s", newProgram(root).dump())
}
