// Command gojq-peer is the gojq side of scripts/bench-scale.sh: the same
// selection as scalebench query (the ids of the records whose status is
// "open" and whose total is at least 970), answered by gojq
// (github.com/itchyny/gojq) from the same text, parse included. It is
// built in its own module, so that the harness does not depend on gojq.
//
//	gojq-peer FILE
//
// It reads FILE (untimed), then decodes it (encoding/json, numbers as
// json.Number, as gojq's own command line reads them), runs the jq
// program and prints one JSON line: the matches, the SHA-256 of their ids
// joined with commas, and the wall and CPU milliseconds.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/itchyny/gojq"
)

const program = `.records[] | select(.status == "open" and .total >= 970) | .id`

func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gojq-peer FILE")
		os.Exit(2)
	}
	text, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	c0, t0 := cpuNow(), time.Now()
	d := json.NewDecoder(bytes.NewReader(text))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	q, err := gojq.Parse(program)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var ids []string
	iter := q.Run(v)
	for {
		x, ok := iter.Next()
		if !ok {
			break
		}
		if err, ok := x.(error); ok {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		b, _ := json.Marshal(x)
		ids = append(ids, string(b))
	}
	wall, cpu := time.Since(t0), cpuNow()-c0
	sum := sha256.Sum256([]byte(strings.Join(ids, ",")))
	json.NewEncoder(os.Stdout).Encode(map[string]any{"stack": "gojq", "bytes": len(text), "matches": len(ids), "ids_sha256": hex.EncodeToString(sum[:]),
		"total": map[string]float64{"wall_ms": float64(wall.Microseconds()) / 1000, "cpu_ms": float64(cpu.Microseconds()) / 1000}})
}
