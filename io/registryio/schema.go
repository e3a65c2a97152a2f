package registryio

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is one compiled JSON Schema from the registry.
type Schema struct {
	// ID is the registry's schema id; 0 for a schema compiled from a file.
	ID int
	// Text is the schema as the registry holds it.
	Text string

	compiled *jsonschema.Schema
}

// Compile compiles a JSON Schema (draft 2020-12 unless it says otherwise).
// An error wraps ErrNotJSONSchema.
func Compile(id int, text string) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("%w: schema %d is not JSON: %v", ErrNotJSONSchema, id, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat() // "format": "date-time" is a rule, not a note
	loc := fmt.Sprintf("registry:///schemas/ids/%d", id)
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("%w: schema %d: %v", ErrNotJSONSchema, id, err)
	}
	cs, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("%w: schema %d does not compile: %v", ErrNotJSONSchema, id, err)
	}
	return &Schema{ID: id, Text: text, compiled: cs}, nil
}

// Check checks one JSON value (the event, after any wire-format header)
// against the schema. It returns nil, or an error whose text is the
// violated rule: see Violation.
func (s *Schema) Check(payload []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(payload))
	if err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	if err := s.compiled.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return errors.New(Violation(ve))
		}
		return err
	}
	return nil
}

var printer = message.NewPrinter(language.English)

// Violation names the violated rules of a validation error, leaves first:
// each as "<JSON pointer of the value> <keyword>: <message>", for example
// `/title type: got number, want string` or
// `/ required: missing property 'timestamp'`, joined by "; ".
func Violation(ve *jsonschema.ValidationError) string {
	var leaves []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			kw := strings.Join(e.ErrorKind.KeywordPath(), "/")
			leaves = append(leaves, fmt.Sprintf("%s %s: %s", pointer(e.InstanceLocation), kw, e.ErrorKind.LocalizedString(printer)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(leaves)
	return strings.Join(leaves, "; ")
}

// pointer is the RFC 6901 JSON pointer of an instance location.
func pointer(loc []string) string {
	if len(loc) == 0 {
		return "/"
	}
	var b strings.Builder
	for _, t := range loc {
		b.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return b.String()
}
