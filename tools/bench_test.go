package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// benchRecords is the size of the benchmarks' synthetic state: 100,000
// records of 7 members (one nested), about 15 MB of JSON.
const benchRecords = 100_000

// benchState is a state of benchRecords records under "/records", built
// as a decoded state is (numbers as json.Number).
func benchState(b *testing.B) *fakeStep { return benchStateOf(b, 0) }

// benchStateOf is benchState with a "notes" member of pad bytes in each
// record (0: none; 850 makes the state about 100 MB of JSON).
func benchStateOf(b *testing.B, pad int) *fakeStep {
	b.Helper()
	recs := make([]any, benchRecords)
	for i := range recs {
		rec := map[string]any{
			"id":      json.Number(fmt.Sprint(i)),
			"name":    fmt.Sprintf("Customer %d", i),
			"email":   fmt.Sprintf("user%d@example.com", i),
			"status":  []string{"open", "closed", "pending"}[i%3],
			"total":   json.Number(fmt.Sprintf("%d.%02d", i%1000, i%100)),
			"tags":    []any{"a", fmt.Sprintf("t%d", i%50)},
			"address": map[string]any{"zip": fmt.Sprintf("%05d", i)},
		}
		if pad > 0 {
			rec["notes"] = benchNote(i, pad)
		}
		recs[i] = rec
	}
	state := map[string]any{"meta": map[string]any{"version": json.Number("1")}, "records": recs}
	if b.N == 1 {
		enc, _ := encode(state)
		b.Logf("state: %d records, %d bytes of JSON", benchRecords, len(enc))
	}
	return &fakeStep{state: state}
}

// benchNote is a record's note of pad bytes: words that differ from
// record to record, as a free-text member's.
func benchNote(i, pad int) string {
	words := []string{"customer", "asked", "about", "the", "delivery", "of", "order", "invoice", "refund", "called", "again", "on", "monday"}
	var sb strings.Builder
	for k := 0; sb.Len() < pad; k++ {
		sb.WriteString(words[(i*7+k*k)%len(words)])
		sb.WriteByte(' ')
	}
	return sb.String()[:pad]
}

// big is the 100 MB state, built once for the benchmarks that use it.
var big struct {
	once sync.Once
	s    *fakeStep
}

// benchCall runs one tool call b.N times, failing on an error result.
func benchCall(b *testing.B, d Def, args string) {
	benchCallOn(b, benchState(b), d, args)
}

// benchCall100MB is benchCall on the 100 MB state (100,000 records of
// about 1 KB).
func benchCall100MB(b *testing.B, d Def, args string) {
	big.once.Do(func() { big.s = benchStateOf(b, 850) })
	benchCallOn(b, big.s, d, args)
}

// benchCallOn runs one tool call on s b.N times, failing on an error
// result.
func benchCallOn(b *testing.B, s Step, d Def, args string) {
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

// The navigation tools on the 100 MB state (docs/scale.md: each under
// 50 ms): a page, a filter that selects 1 % of the records (1,000 of
// 100,000), and a search.

// BenchmarkReadStatePage100MB reads a page of 50 records.
func BenchmarkReadStatePage100MB(b *testing.B) {
	benchCall100MB(b, ReadState, `{"pointer": "/records", "offset": 50000, "limit": 50, "depth": 1}`)
}

// BenchmarkQueryStateFilter100MB selects 1 % of the records by two
// members.
func BenchmarkQueryStateFilter100MB(b *testing.B) {
	benchCall100MB(b, QueryState, `{"path": "$.records[?@.status == 'open' && @.total >= 970].id"}`)
}

// BenchmarkSearchState100MB finds a text in every scalar of the state.
func BenchmarkSearchState100MB(b *testing.B) {
	benchCall100MB(b, SearchState, `{"text": "USER99999@"}`)
}
