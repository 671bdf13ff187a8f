package bench

import (
	"fmt"
	"strconv"
	"strings"
)

// Scale is the size a case's state is grown to (run --scale): 0 is the
// state as the case file writes it ("1x"), else about Bytes bytes of
// JSON text (Case.Grown).
type Scale struct{ Bytes int64 }

// MinScaleBytes and MaxScaleBytes bound the size a state is grown to:
// 1 KB (a size below a state's own leaves it as it is), and 200 MB (a
// grown state takes about twelve times its size in memory while it is
// made and verified).
const (
	MinScaleBytes = 1e3
	MaxScaleBytes = 200e6
)

// ParseScale reads a scale: "1x" (the state as written), or a size with
// a unit, "B", "KB", "MB" or "GB" in powers of 1000 ("500KB", "10MB",
// "1.5MB"), from 1 KB to 200 MB. A size below a case's own state leaves
// that case as it is.
func ParseScale(s string) (Scale, error) {
	t := strings.TrimSpace(s)
	if strings.EqualFold(t, "1x") {
		return Scale{}, nil
	}
	u := strings.ToUpper(t)
	mult := int64(0)
	for _, unit := range []struct {
		suffix string
		m      int64
	}{{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}} {
		if strings.HasSuffix(u, unit.suffix) {
			u, mult = strings.TrimSpace(strings.TrimSuffix(u, unit.suffix)), unit.m
			break
		}
	}
	if mult == 0 {
		return Scale{}, fmt.Errorf("scale %q: want 1x or a size such as 1MB, 10MB, 500KB (units KB, MB, GB)", s)
	}
	f, err := strconv.ParseFloat(u, 64)
	// !(n >= Min) refuses NaN too, which no comparison holds for.
	if n := f * float64(mult); err != nil || !(n >= MinScaleBytes) || n > MaxScaleBytes {
		return Scale{}, fmt.Errorf("scale %q: want a size from 1KB to 200MB, such as 1MB, 10MB, 500KB", s)
	}
	return Scale{Bytes: int64(f * float64(mult))}, nil
}

// String is the scale as ParseScale reads it: "1x", or the size in the
// largest unit that writes it whole ("10MB", "1500KB", "250B" for a size
// that is not a whole KB).
func (s Scale) String() string {
	switch b := s.Bytes; {
	case b <= 0:
		return "1x"
	case b%1e9 == 0:
		return strconv.FormatInt(b/1e9, 10) + "GB"
	case b%1e6 == 0:
		return strconv.FormatInt(b/1e6, 10) + "MB"
	case b%1e3 == 0:
		return strconv.FormatInt(b/1e3, 10) + "KB"
	default:
		return strconv.FormatInt(b, 10) + "B"
	}
}

// IsBase reports whether s is 1x: the state as the case writes it.
func (s Scale) IsBase() bool { return s.Bytes <= 0 }
