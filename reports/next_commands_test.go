package reports

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// proseCommand matches what a reader types at a shell (a command with its
// arguments, a rocedump flag, a file path to read) when it stands in the
// prose of a next step. The renderers show only backtick-quoted text as
// code (render.nextSpans), so a command outside backticks reads as prose in
// Markdown and HTML and gets Markdown-escaped (<if> becomes \<if\>).
var proseCommand = regexp.MustCompile(`\b(rdma (resource|statistic|link)|ethtool -S|tcpdump -s|rocedump (live|read)|ip (route|-br|-d)|ss -\w|` +
	`nvme list-subsys|iscsiadm -m|mount -t|editcap|mlnx_qos|mlxconfig|mlxreg|dmesg|show_gids|nvidia-smi|cma_roce_tos)\b|` +
	`(^|[\s(])--?(topology|rail-subnet|snaplen|B)\b|(^|[\s(])/(sys|etc)/`)

// TestNextCommandsInBackticks reads every next step the report modules can
// write (the Next fields and constants of this package's source, so also
// the ones no shipped capture triggers) and checks that each command it
// names is inside backticks.
func TestNextCommandsInBackticks(t *testing.T) {
	nexts := nextTexts(t)
	if len(nexts) < 30 {
		t.Fatalf("found only %d next steps in the source; the scan is broken", len(nexts))
	}
	t.Logf("%d next steps", len(nexts))
	for pos, s := range nexts {
		if strings.Count(s, "`")%2 != 0 {
			t.Errorf("%s: unbalanced backticks in %q", pos, s)
			continue
		}
		prose := regexp.MustCompile("`[^`]*`").ReplaceAllString(s, "``")
		if m := proseCommand.FindString(prose); m != "" {
			t.Errorf("%s: command %q outside backticks in next step %q", pos, strings.TrimSpace(m), s)
		}
	}
}

// nextTexts returns the package's next steps by source position: values of
// Next fields in composite literals, assignments to .Next, and the next
// texts of the fatal NAK table.
func nextTexts(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	consts := map[string]ast.Expr{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, spec := range g.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							consts[n.Name] = vs.Values[i]
						}
					}
				}
			}
		}
	}
	var eval func(e ast.Expr) (string, bool)
	eval = func(e ast.Expr) (string, bool) {
		switch e := e.(type) {
		case *ast.BasicLit:
			if e.Kind != token.STRING {
				return "", false
			}
			s, err := strconv.Unquote(e.Value)
			return s, err == nil
		case *ast.BinaryExpr:
			a, ok1 := eval(e.X)
			b, ok2 := eval(e.Y)
			return a + b, ok1 && ok2 && e.Op == token.ADD
		case *ast.Ident:
			if c, ok := consts[e.Name]; ok {
				return eval(c)
			}
		case *ast.ParenExpr:
			return eval(e.X)
		case *ast.CallExpr:
			// fmt.Sprintf: the format holds the text; its verbs stand
			// for numbers.
			if sel, ok := e.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Sprintf" && len(e.Args) > 0 {
				return eval(e.Args[0])
			}
		}
		return "", false
	}
	out := map[string]string{}
	add := func(e ast.Expr) {
		if sel, ok := e.(*ast.SelectorExpr); ok && sel.Sel.Name == "next" {
			return // the fatal NAK table's texts, read from the table itself
		}
		s, ok := eval(e)
		if !ok {
			t.Errorf("%s: a next step the test cannot read; make it a string constant expression", fset.Position(e.Pos()))
			return
		}
		out[fset.Position(e.Pos()).String()] = s
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.KeyValueExpr:
				if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Next" {
					add(n.Value)
				}
			case *ast.AssignStmt:
				for i, l := range n.Lhs {
					if sel, ok := l.(*ast.SelectorExpr); ok && sel.Sel.Name == "Next" && i < len(n.Rhs) {
						add(n.Rhs[i])
					}
				}
			case *ast.ValueSpec:
				for i, name := range n.Names {
					if name.Name != "fatalNAK" || i >= len(n.Values) {
						continue
					}
					for _, el := range n.Values[i].(*ast.CompositeLit).Elts {
						v := el.(*ast.KeyValueExpr).Value.(*ast.CompositeLit)
						add(v.Elts[len(v.Elts)-1])
					}
				}
			}
			return true
		})
	}
	return out
}
