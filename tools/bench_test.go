package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// benchRecords is the size of the benchmarks' synthetic state: 100,000
// records of 7 members (one nested), about 15 MB of JSON.
const benchRecords = 100_000

// benchState is a state of benchRecords records under "/records", built
// as a decoded state is (numbers as json.Number).
func benchState(b *testing.B) *fakeStep {
	b.Helper()
	recs := make([]any, benchRecords)
	for i := range recs {
		recs[i] = map[string]any{
			"id":      json.Number(fmt.Sprint(i)),
			"name":    fmt.Sprintf("Customer %d", i),
			"email":   fmt.Sprintf("user%d@example.com", i),
			"status":  []string{"open", "closed", "pending"}[i%3],
			"total":   json.Number(fmt.Sprintf("%d.%02d", i%1000, i%100)),
			"tags":    []any{"a", fmt.Sprintf("t%d", i%50)},
			"address": map[string]any{"zip": fmt.Sprintf("%05d", i)},
		}
	}
	state := map[string]any{"meta": map[string]any{"version": json.Number("1")}, "records": recs}
	if b.N == 1 {
		enc, _ := encode(state)
		b.Logf("state: %d records, %d bytes of JSON", benchRecords, len(enc))
	}
	return &fakeStep{state: state}
}

// benchCall runs one tool call b.N times, failing on an error result.
func benchCall(b *testing.B, d Def, args string) {
	s := benchState(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		res, err := d.Call(ctx, s, args)
		if err != nil || res.Code != "" {
			b.Fatalf("%s(%s): %.200s (%s) %v", d.Name, args, res.Text, res.Code, err)
		}
	}
}

// BenchmarkReadStatePage reads a page of 50 records from the middle of
// the list.
func BenchmarkReadStatePage(b *testing.B) {
	benchCall(b, ReadState, `{"pointer": "/records", "offset": 50000, "limit": 50}`)
}

// BenchmarkReadStateOverLimit reads the whole list at the default
// arguments: the answer is the first page that fits the result limit.
func BenchmarkReadStateOverLimit(b *testing.B) {
	benchCall(b, ReadState, `{"pointer": "/records"}`)
}

// BenchmarkQueryStateFilter filters the records by two members.
func BenchmarkQueryStateFilter(b *testing.B) {
	benchCall(b, QueryState, `{"path": "$.records[?@.status == 'open' && @.total > 990].id"}`)
}

// BenchmarkQueryStateDescendant finds a member name anywhere.
func BenchmarkQueryStateDescendant(b *testing.B) {
	benchCall(b, QueryState, `{"path": "$..zip"}`)
}

// BenchmarkSearchState finds a text in every scalar of the state.
func BenchmarkSearchState(b *testing.B) {
	benchCall(b, SearchState, `{"text": "USER99999@"}`)
}
