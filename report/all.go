package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// LongColumns are the columns of the tidy file WriteAll writes beside the
// tables (long.csv, long.json): one row per table × configuration ×
// actor × group × metric. group holds the row's other keys as key=value
// pairs joined by ";" (domain=finance, gate=scope, view=projected); lo
// and hi are the metric's 95 % interval where the table has one.
var LongColumns = []string{"table", "config", "label", "actor", "group", "metric", "value", "lo", "hi"}

// WriteAll writes every table of a report into dir (made if missing), in
// format csv or json: one file per table, NAME.csv (WriteCSV: Data's
// machine columns, one value per cell) or NAME.json (an array of
// objects, column → value, null where a value is missing), and the tidy
// long.csv or long.json (LongColumns) of every table that has Data. It
// returns the files written, in order.
func WriteAll(dir string, rep Report, format string) ([]string, error) {
	if format != "csv" && format != "json" {
		return nil, fmt.Errorf("every table goes into files as csv or json, not %s", format)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	write := func(name string, b []byte) error {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return err
		}
		files = append(files, path)
		return nil
	}
	var long [][]any
	for _, t := range rep.Tables {
		b, err := encodeTable(t, format)
		if err != nil {
			return files, err
		}
		if err := write(t.Name+"."+format, b); err != nil {
			return files, err
		}
		long = append(long, LongRows(t)...)
	}
	b, err := encodeTable(Table{Name: "long", Data: &Data{Columns: LongColumns, Rows: long}}, format)
	if err != nil {
		return files, err
	}
	return files, write("long."+format, b)
}

// encodeTable is a table as a CSV file (WriteCSV) or a JSON one
// (tableObjects, indented).
func encodeTable(t Table, format string) ([]byte, error) {
	if format == "json" {
		b, err := json.MarshalIndent(tableObjects(t), "", "  ")
		return append(b, '\n'), err
	}
	var buf bytes.Buffer
	err := WriteCSV(&buf, t)
	return buf.Bytes(), err
}

// tableObjects is a table's Data as objects (column → value), or its
// printed rows under its header when it has no Data.
func tableObjects(t Table) []map[string]any {
	out := []map[string]any{}
	if t.Data == nil {
		for _, r := range t.Rows {
			o := map[string]any{}
			for i, h := range t.Header {
				if i < len(r) {
					o[h] = r[i]
				}
			}
			out = append(out, o)
		}
		return out
	}
	for _, r := range t.Data.Rows {
		o := map[string]any{}
		for i, c := range t.Data.Columns {
			if i < len(r) {
				o[c] = jsonValue(r[i])
			}
		}
		out = append(out, o)
	}
	return out
}

func jsonValue(v any) any {
	if x, ok := v.(float64); ok && (math.IsNaN(x) || math.IsInf(x, 0)) {
		return nil
	}
	return v
}

// LongRows are a table's Data in the tidy form of LongColumns: each
// numeric column is a metric, its interval the _lo and _hi columns that
// follow it; the string columns are keys (config, label and actor have
// their own columns, the others go into group). A table without Data has
// none.
func LongRows(t Table) [][]any {
	if t.Data == nil {
		return nil
	}
	cols := t.Data.Columns
	isKey := make([]bool, len(cols))
	for i := range cols {
		isKey[i] = true
		for _, r := range t.Data.Rows {
			if i < len(r) && r[i] != nil {
				if _, ok := r[i].(string); !ok {
					isKey[i] = false
				}
			}
		}
	}
	bound := func(c string) bool { return strings.HasSuffix(c, "_lo") || strings.HasSuffix(c, "_hi") }
	var out [][]any
	for _, r := range t.Data.Rows {
		keys := map[string]string{}
		var group []string
		for i, c := range cols {
			if !isKey[i] || i >= len(r) || r[i] == nil {
				continue
			}
			switch c {
			case "config", "label", "actor":
				keys[c] = r[i].(string)
			default:
				group = append(group, c+"="+r[i].(string))
			}
		}
		for i, c := range cols {
			if isKey[i] || bound(c) || i >= len(r) {
				continue
			}
			var lo, hi any
			for k := i + 1; k < len(cols) && bound(cols[k]); k++ {
				if k < len(r) {
					if strings.HasSuffix(cols[k], "_lo") {
						lo = r[k]
					} else {
						hi = r[k]
					}
				}
			}
			out = append(out, []any{t.Name, keys["config"], keys["label"], keys["actor"], strings.Join(group, ";"), c, r[i], lo, hi})
		}
	}
	return out
}
