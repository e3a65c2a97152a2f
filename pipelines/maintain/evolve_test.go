package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/haade/haade/io/icebergio"
	"github.com/haade/haade/testing/icebergtest"
	"github.com/haade/haade/transforms/tables"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

// TestEvolveBadFlags checks that a bad command line of `maintain evolve` is
// one line naming the flag, and exit 2.
func TestEvolveBadFlags(t *testing.T) {
	dir := t.TempDir()
	cat := "--catalog-uri=" + filepath.Join(dir, "catalog.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--promote=region:string", cat}, "--table"},
		{[]string{"--table=lakehouse.bronze_events", cat}, "--promote, --widen, --rename or --schema-registry"},
		{[]string{"--table=lakehouse.bronze_events", "--promote=region", cat}, "--promote=region: want name:value"},
		{[]string{"--table=lakehouse.bronze_events", "--promote=region:varchar", cat}, `--promote=region:varchar: unknown type "varchar"`},
		{[]string{"--table=lakehouse.bronze_events", "--widen=amount:decimal", cat}, "--widen=amount:decimal"},
		{[]string{"--table=lakehouse.bronze_events", "--rename=a", cat}, "--rename=a"},
		{[]string{"--table=bronze", "--promote=region:string", cat}, "--table=bronze"},
		{[]string{"--table=lakehouse.bronze_events", "--since-version=2", cat}, "--since-version=2: needs --schema-registry"},
		{[]string{"--table=lakehouse.bronze_events", "--schema-registry=http://127.0.0.1:1/apis/ccompat/v7", cat}, "--since-version=0"},
		{[]string{"--table=lakehouse.bronze_events", "--promote=region:string", cat}, "--catalog-uri"}, // no such catalog
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"evolve"}, c.args...), func(string) string { return "" }, &out, &errb)
		lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], c.want) {
			t.Errorf("evolve %v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, code, errb.String(), c.want)
		}
	}
}

// TestEvolveFromRegistry: the subject's version 2 adds three optional
// members; the two with a column type become columns of the table, the
// array stays in extra, and the command says so.
func TestEvolveFromRegistry(t *testing.T) {
	ctx := context.Background()
	reg := srfake.New()
	defer reg.Close()
	v1 := `{"type":"object","properties":{"source":{"type":"string"},"title":{"type":["string","null"]},"timestamp":{"type":"string","format":"date-time"}},"required":["source","title","timestamp"]}`
	v2 := `{"type":"object","properties":{"source":{"type":"string"},"title":{"type":["string","null"]},"timestamp":{"type":"string","format":"date-time"},` +
		`"region":{"type":"string"},"amount":{"type":["number","null"]},"tags":{"type":"array"}},"required":["source","title","timestamp"]}`
	reg.SeedSchema("fintech.debt.raw-value", 1, 1, sr.Schema{Schema: v1, Type: sr.TypeJSON})
	reg.SeedSchema("fintech.debt.raw-value", 2, 2, sr.Schema{Schema: v2, Type: sr.TypeJSON})

	cfg, cat := icebergtest.Catalog(t)
	const ident = "lakehouse.bronze_events"
	if _, err := icebergio.Open(ctx, cfg, tables.Table{Ident: ident, Row: tables.BronzeEvent{}}, "bronze"); err != nil {
		t.Fatal(err)
	}
	args := []string{"evolve", "--table=" + ident, "--catalog-uri=" + cfg.URI, "--warehouse=" + cfg.Warehouse,
		"--schema-registry=" + reg.URL(), "--since-version=1"}
	var out, errb bytes.Buffer
	if code := run(ctx, args, func(string) string { return "" }, &out, &errb); code != 0 {
		t.Fatalf("evolve from the registry: exit %d\n%s%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"member amount (number) added since version 1: promote to double",
		"member region (string) added since version 1: promote to string", "member tags (array) not promoted"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out.String())
		}
	}
	sc := icebergtest.Load(t, cat, ident).Schema()
	for name, typ := range map[string]iceberg.Type{"region": iceberg.PrimitiveTypes.String, "amount": iceberg.PrimitiveTypes.Float64} {
		f, ok := sc.FindFieldByName(name)
		if !ok || !f.Type.Equals(typ) || f.Required {
			t.Errorf("column %s: %+v (found %v), want optional %v", name, f, ok, typ)
		}
	}
	if _, ok := sc.FindFieldByName("tags"); ok {
		t.Error("the array member tags became a column")
	}

	// Nothing new since version 2: nothing to do.
	out.Reset()
	args[len(args)-1] = "--since-version=2"
	if code := run(ctx, args, func(string) string { return "" }, &out, &errb); code != 0 || !strings.Contains(out.String(), "nothing to do") {
		t.Errorf("evolve since version 2: exit %d, %q", code, out.String())
	}
}
