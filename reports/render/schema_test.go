package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestJSONMatchesSchema validates the JSON of every fixture against
// schema.json. Objects in the schema forbid extra properties and require
// every field that is always written, so this also proves the schema
// describes every field the model has.
func TestJSONMatchesSchema(t *testing.T) {
	root := parseJSON(t, Schema())
	if got := root.(map[string]any)["$schema"]; got != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v, want draft 2020-12", got)
	}
	for _, fx := range fixtures() {
		var b bytes.Buffer
		if err := WriteJSON(&b, fx.r); err != nil {
			t.Fatal(err)
		}
		doc := parseJSON(t, b.String())
		v := validator{root: root.(map[string]any)}
		v.check("$", root, doc)
		for _, e := range v.errs {
			t.Errorf("%s: %s", fx.name, e)
		}
	}
}

// TestSchemaValidatorCatches checks that the validator rejects what it
// must, so a passing TestJSONMatchesSchema means something.
func TestSchemaValidatorCatches(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, incidentReport()); err != nil {
		t.Fatal(err)
	}
	good := b.String()
	tests := []struct {
		name, old, new, want string
	}{
		{"unknown kind", `"kind": "pfc"`, `"kind": "pause"`, "not one of"},
		{"wrong type", `"schema_version": 1`, `"schema_version": "1"`, "want integer"},
		{"null list", `"problems": [`, `"problems": null, "x": [`, "want array"},
		{"missing field", `"verdict": `, `"verdikt": `, `missing required "verdict"`},
		{"negative count", `"truncated": 1204`, `"truncated": -1`, "below minimum"},
		{"bad map value", `"recovery_ms_max": 4.2`, `"recovery_ms_max": "4.2"`, "want number"},
	}
	root := parseJSON(t, Schema()).(map[string]any)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := strings.Replace(good, tc.old, tc.new, 1)
			if bad == good {
				t.Fatalf("fixture JSON has no %q", tc.old)
			}
			v := validator{root: root}
			v.check("$", root, parseJSON(t, bad))
			if !slices.ContainsFunc(v.errs, func(e string) bool { return strings.Contains(e, tc.want) }) {
				t.Errorf("errors %q, want one containing %q", v.errs, tc.want)
			}
		})
	}
}

func parseJSON(t *testing.T, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("parse JSON: %v", err)
	}
	return v
}

// validator checks a document against the subset of JSON Schema that
// schema.json uses: $ref (to #/$defs), type, enum, required, properties,
// additionalProperties, items and minimum.
type validator struct {
	root map[string]any
	errs []string
}

func (v *validator) fail(path, format string, args ...any) {
	v.errs = append(v.errs, path+": "+fmt.Sprintf(format, args...))
}

func (v *validator) check(path string, schemaNode, doc any) {
	s, ok := schemaNode.(map[string]any)
	if !ok {
		v.fail(path, "schema is %T, want object", schemaNode)
		return
	}
	if ref, ok := s["$ref"].(string); ok {
		name, found := strings.CutPrefix(ref, "#/$defs/")
		def, exists := v.root["$defs"].(map[string]any)[name]
		if !found || !exists {
			v.fail(path, "unresolvable $ref %q", ref)
			return
		}
		v.check(path, def, doc)
	}
	if t, ok := s["type"]; ok && !v.typeOK(t, doc) {
		v.fail(path, "%s, want %v", describe(doc), t)
		return
	}
	if e, ok := s["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return fmt.Sprint(x) == fmt.Sprint(doc) }) {
		v.fail(path, "%v is not one of %v", doc, e)
	}
	if m, ok := s["minimum"].(json.Number); ok {
		if n, isNum := doc.(json.Number); isNum {
			lo, _ := m.Float64()
			if f, _ := n.Float64(); f < lo {
				v.fail(path, "%v below minimum %v", n, m)
			}
		}
	}
	switch d := doc.(type) {
	case map[string]any:
		v.object(path, s, d)
	case []any:
		if items, ok := s["items"]; ok {
			for i, x := range d {
				v.check(fmt.Sprintf("%s[%d]", path, i), items, x)
			}
		}
	}
}

func (v *validator) object(path string, s, d map[string]any) {
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			if _, ok := d[r.(string)]; !ok {
				v.fail(path, "missing required %q", r)
			}
		}
	}
	props, _ := s["properties"].(map[string]any)
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if p, ok := props[k]; ok {
			v.check(path+"."+k, p, d[k])
			continue
		}
		switch ap := s["additionalProperties"].(type) {
		case bool:
			if !ap {
				v.fail(path, "property %q is not in the schema", k)
			}
		case map[string]any:
			v.check(path+"."+k, ap, d[k])
		}
	}
}

func (v *validator) typeOK(t, doc any) bool {
	if ts, ok := t.([]any); ok {
		return slices.ContainsFunc(ts, func(x any) bool { return v.typeOK(x, doc) })
	}
	switch t {
	case "object":
		_, ok := doc.(map[string]any)
		return ok
	case "array":
		_, ok := doc.([]any)
		return ok
	case "string":
		_, ok := doc.(string)
		return ok
	case "boolean":
		_, ok := doc.(bool)
		return ok
	case "null":
		return doc == nil
	case "number":
		_, ok := doc.(json.Number)
		return ok
	case "integer":
		n, ok := doc.(json.Number)
		return ok && !strings.ContainsAny(string(n), ".eE")
	}
	return false
}

func describe(doc any) string {
	switch doc.(type) {
	case nil:
		return "null"
	case json.Number:
		return "number " + fmt.Sprint(doc)
	case string:
		return "string"
	}
	return fmt.Sprintf("%T", doc)
}
