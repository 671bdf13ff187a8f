package report_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/patchbench/patchbench/report"
)

// TestWriteAll writes every table as CSV and as JSON: a file per table
// and the tidy long file, whose rows give each figure of the main table
// with its interval, as the main table's Data has them.
func TestWriteAll(t *testing.T) {
	rep := exampleReport(t)
	for _, format := range []string{"csv", "json"} {
		dir := t.TempDir()
		files, err := report.WriteAll(dir, rep, format)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != len(rep.Tables)+1 {
			t.Errorf("%s: %d files for %d tables", format, len(files), len(rep.Tables))
		}
		for _, tb := range rep.Tables {
			if _, err := os.Stat(filepath.Join(dir, tb.Name+"."+format)); err != nil {
				t.Errorf("%s: %v", format, err)
			}
		}
		long := readLong(t, filepath.Join(dir, "long."+format), format)
		main := rep.Tables[0]
		col := func(name string) int {
			for i, c := range main.Data.Columns {
				if c == name {
					return i
				}
			}
			t.Fatalf("no column %s", name)
			return -1
		}
		found := 0
		for _, r := range main.Data.Rows {
			key := "main|" + r[col("config")].(string) + "|" + r[col("actor")].(string) + "|"
			for _, m := range []struct{ metric, lo, hi string }{{"leak_rate", "leak_lo", "leak_hi"}, {"semantic_pass", "semantic_pass_lo", "semantic_pass_hi"}, {"attack_success_rate", "attack_success_lo", "attack_success_hi"}} {
				got, ok := long[key+m.metric]
				if !ok {
					t.Errorf("%s: no long row %s%s", format, key, m.metric)
					continue
				}
				want := [3]string{num(r[col(m.metric)]), num(r[col(m.lo)]), num(r[col(m.hi)])}
				if got != want {
					t.Errorf("%s: %s%s = %v, want %v", format, key, m.metric, got, want)
				}
				found++
			}
		}
		if found == 0 {
			t.Errorf("%s: no figure of the main table checked", format)
		}
	}
}

// readLong reads a long file into table|config|actor|metric → value, lo,
// hi (as CSV writes them).
func readLong(t *testing.T, path, format string) map[string][3]string {
	t.Helper()
	out := map[string][3]string{}
	f, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if format == "csv" {
		rows, err := csv.NewReader(bytes.NewReader(f)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows[1:] {
			out[r[0]+"|"+r[1]+"|"+r[3]+"|"+r[5]] = [3]string{r[6], r[7], r[8]}
		}
		return out
	}
	var objs []map[string]any
	if err := json.Unmarshal(f, &objs); err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		out[o["table"].(string)+"|"+o["config"].(string)+"|"+o["actor"].(string)+"|"+o["metric"].(string)] = [3]string{num(o["value"]), num(o["lo"]), num(o["hi"])}
	}
	return out
}

// num writes a value as the CSV does (up to 10 significant digits).
func num(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(x, 'g', 10, 64)
	case int:
		return strconv.Itoa(x)
	}
	return ""
}
