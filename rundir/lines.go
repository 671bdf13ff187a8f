package rundir

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/patchbench/patchbench/internal/regularfile"
)

// MaxRecordBytes bounds one line of runs.jsonl (64 MiB, its newline not
// counted): every reader refuses a longer line with a *LineError naming
// its line and byte offset, and reads no more of it than that, so that no
// file (a line of NUL bytes appended by `truncate -s +1G`, one endless
// line) takes more memory than a record of this size costs. It is twice
// MaxWriteBytes, the most a Sink writes of one record.
const MaxRecordBytes = 64 << 20

// MaxWriteBytes bounds the line a Sink writes for one record (32 MiB). A
// run whose record would be longer (many attempts of answers near a raised
// --max-answer-bytes) is written with its raw responses cut to their
// first actors.KeptAnswerBytes, as the record's Truncated members say
// (Record.shrink); the run's figures were taken on the whole answers.
const MaxWriteBytes = 32 << 20

// maxManifestBytes bounds manifest.json and its backup (16 MiB; a
// manifest is a few KB, with one id per case).
const maxManifestBytes = 16 << 20

// ErrLineTooLong is the cause of a *LineError for a line of runs.jsonl
// longer than MaxRecordBytes.
var ErrLineTooLong = fmt.Errorf("the line is longer than %d MiB, the longest a run record may be", MaxRecordBytes>>20)

// lineReader reads lines of at most limit bytes (their newline not
// counted) from a reader: a longer line is returned cut after limit+1
// bytes, with ErrLineTooLong, and its rest can be skipped or copied
// (rest). What it holds is at most limit plus its buffer (1 MiB).
type lineReader struct {
	br    *bufio.Reader
	limit int
	buf   []byte
	open  bool // the last line returned was too long and its rest is unread
}

func newLineReader(r io.Reader, limit int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 1<<20), limit: limit}
}

// next returns the next line with its newline (the last line may lack
// it), valid until the next call; io.EOF when nothing is left. A line
// longer than the limit comes back cut, with ErrLineTooLong (any rest of
// it unread: rest). Other errors are the reader's.
func (l *lineReader) next() ([]byte, error) {
	if l.open {
		if _, err := l.rest(io.Discard); err != nil {
			return nil, err
		}
	}
	l.buf = l.buf[:0]
	for {
		b, err := l.br.ReadSlice('\n')
		l.grow(len(b))
		l.buf = append(l.buf, b...)
		switch {
		case err == nil:
			if len(l.buf)-1 > l.limit {
				return l.buf, ErrLineTooLong
			}
			return l.buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			if len(l.buf) > l.limit {
				l.open = true
				return l.buf, ErrLineTooLong
			}
		case err == io.EOF:
			switch {
			case len(l.buf) == 0:
				return nil, io.EOF
			case len(l.buf) > l.limit:
				return l.buf, ErrLineTooLong
			}
			return l.buf, nil
		default:
			return l.buf, err
		}
	}
}

// grow makes room for n more bytes in buf, doubling it but never past
// what a line of the limit needs (limit plus a buffer's worth, the most
// next appends), so that a long line costs the limit, not twice it.
func (l *lineReader) grow(n int) {
	if len(l.buf)+n <= cap(l.buf) {
		return
	}
	c := min(max(2*cap(l.buf), len(l.buf)+n), l.limit+l.br.Size()+1)
	c = max(c, len(l.buf)+n)
	nb := make([]byte, len(l.buf), c)
	copy(nb, l.buf)
	l.buf = nb
}

// rest copies to w what is left of a line that next returned too long, up
// to and with its newline, and returns how many bytes that was.
func (l *lineReader) rest(w io.Writer) (int64, error) {
	var n int64
	for l.open {
		b, err := l.br.ReadSlice('\n')
		n += int64(len(b))
		if _, werr := w.Write(b); werr != nil {
			return n, werr
		}
		switch {
		case err == nil || err == io.EOF:
			l.open = false
		case !errors.Is(err, bufio.ErrBufferFull):
			return n, err
		}
	}
	return n, nil
}

// NotRegularError is a file of a run directory that is not a regular file
// (a FIFO, a device such as a symlink to /dev/zero, a socket, a
// directory): every reader refuses it rather than block or read without
// end.
type NotRegularError = regularfile.NotRegularError

// openRegular opens a file of a run directory for reading
// (regularfile.Open: a *NotRegularError for another kind of file).
func openRegular(path string) (*os.File, error) { return regularfile.Open(path) }

// readRegular reads a file of a run directory of at most limit bytes
// (regularfile.Read).
func readRegular(path string, limit int64) ([]byte, error) { return regularfile.Read(path, limit) }
