package check

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/patchbench/patchbench/bench"
)

// A seventh configuration is a file; nothing else changes.
func TestSeventhConfiguration(t *testing.T) {
	fsys := fstest.MapFS{}
	entries, err := os.ReadDir("../bench/configs")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("../bench/configs", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fsys[e.Name()] = &fstest.MapFile{Data: b}
	}
	fsys["projected-acl.yaml"] = &fstest.MapFile{Data: []byte("name: projected-acl\nlabel: View+ACL\norder: 7\nview: projected\ngates: [acl, phase]\n")}
	cfgs, err := bench.LoadConfigs(fsys, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != 7 || cfgs[6].Name != "projected-acl" || !cfgs[6].Projected() || !cfgs[6].GateSet.ACL {
		t.Fatalf("got %d configurations, last %+v", len(cfgs), cfgs[len(cfgs)-1])
	}
	c, ps := bench.ParseCase(exampleFile, []byte(readExample(t)))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	if ps, err := Validate(context.Background(), []*bench.Case{c}, cfgs); err != nil || len(ps) > 0 {
		t.Fatalf("the example under seven configurations: %v %v", err, ps)
	}
}
