package topology

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// This file is the strict walk over yaml.v3 nodes: one document, mappings
// with known keys only, no aliases, scalars where scalars belong. Every
// error it returns is a *ParseError with the node's line.

// document decodes data into its one YAML document's root node.
func document(data []byte, file string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &ParseError{File: file, Line: 1, Msg: "empty file: want nodes and/or subnets", Err: ErrEmpty}
		}
		return nil, yamlError(file, err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, yamlError(file, err)
	default:
		return nil, &ParseError{File: file, Line: max(extra.Line, 1), Msg: "more than one YAML document", Err: ErrSyntax}
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil, &ParseError{File: file, Line: max(doc.Line, 1), Msg: "empty file: want nodes and/or subnets", Err: ErrEmpty}
	}
	return doc.Content[0], nil
}

var yamlLineRE = regexp.MustCompile(`^line (\d+): (.*)$`)

// yamlError turns a yaml.v3 syntax error ("yaml: line 3: did not find
// expected key") into a ParseError. yaml.v3 leaves the line out when it is
// the first; for parser (not scanner) errors it gives the line before the
// one it means, and that one is where the enclosing block starts.
func yamlError(file string, err error) *ParseError {
	msg := strings.TrimPrefix(strings.TrimSpace(err.Error()), "yaml: ")
	line := 0
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	switch msg {
	case "did not find expected key", "did not find expected '-' indicator",
		"did not find expected ',' or ']'", "did not find expected ',' or '}'":
		line++
		msg += " (in the block that starts on this line)"
	case "did not find expected node content", "did not find expected <document start>", "did not find expected <stream-start>",
		"found duplicate %YAML directive", "found duplicate %TAG directive",
		"found incompatible YAML document", "found undefined tag handle":
		line++
	}
	return &ParseError{File: file, Line: max(line, 1), Msg: "YAML: " + msg, Err: ErrSyntax}
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// walker carries the file name into the node helpers.
type walker struct{ file string }

func (w walker) errorf(n *yaml.Node, sentinel error, format string, args ...any) *ParseError {
	return &ParseError{File: w.file, Line: max(n.Line, 1), Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

// noAlias refuses YAML aliases: a topology file has no use for them, and
// walking a tree of nested aliases costs exponential time.
func (w walker) noAlias(n *yaml.Node) error {
	if n.Kind == yaml.AliasNode {
		return w.errorf(n, ErrSyntax, "YAML aliases (*%s) are not supported", n.Value)
	}
	return nil
}

// mapping returns the values of mapping n by key. Keys not in allowed, keys
// given twice and alias values are errors. what names n in messages.
func (w walker) mapping(n *yaml.Node, what string, allowed ...string) (map[string]*yaml.Node, error) {
	if err := w.noAlias(n); err != nil {
		return nil, err
	}
	if n.Kind != yaml.MappingNode {
		return nil, w.errorf(n, ErrSyntax, "%s must be a mapping of %s", what, strings.Join(allowed, ", "))
	}
	out := make(map[string]*yaml.Node, len(n.Content)/2)
	keyLine := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if err := w.noAlias(k); err != nil {
			return nil, err
		}
		if k.Kind != yaml.ScalarNode {
			return nil, w.errorf(k, ErrSyntax, "%s has a key that is not a name", what)
		}
		known := false
		for _, a := range allowed {
			known = known || k.Value == a
		}
		if !known {
			return nil, w.errorf(k, ErrUnknownKey, "unknown key %q in %s (want %s)", k.Value, what, strings.Join(allowed, ", "))
		}
		if l, dup := keyLine[k.Value]; dup {
			return nil, w.errorf(k, ErrDuplicate, "key %q given twice in %s (also line %d)", k.Value, what, l)
		}
		if err := w.noAlias(v); err != nil {
			return nil, err
		}
		out[k.Value] = v
		keyLine[k.Value] = k.Line
	}
	return out, nil
}

// sequence returns the items of list n; an absent or null list is empty.
func (w walker) sequence(n *yaml.Node, what string) ([]*yaml.Node, error) {
	if n == nil || isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, w.errorf(n, ErrSyntax, "%s must be a list", what)
	}
	for _, c := range n.Content {
		if err := w.noAlias(c); err != nil {
			return nil, err
		}
	}
	return n.Content, nil
}

// scalar returns the text of the required single value m[key]; parent is
// the mapping, for the line of a missing key.
func (w walker) scalar(m map[string]*yaml.Node, key string, parent *yaml.Node, what string) (string, *yaml.Node, error) {
	n := m[key]
	if n == nil || isNull(n) {
		return "", parent, w.errorf(parent, ErrMissing, "%s has no %s", what, key)
	}
	if n.Kind != yaml.ScalarNode {
		return "", n, w.errorf(n, ErrSyntax, "%s of %s must be a single value", key, what)
	}
	if n.Value == "" {
		return "", n, w.errorf(n, ErrMissing, "%s of %s is empty", key, what)
	}
	return n.Value, n, nil
}
