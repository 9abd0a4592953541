package sandbox

import (
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/durableagent/durableagent/internal/tools"
)

// limitStatus is the worker's end of statusFd: what the limit shell
// (limitScript) reports after the command, bash's `times`.
type limitStatus struct {
	r, w   *os.File
	report []byte // read once finished
}

// newLimitStatus makes the pipe; w goes to bwrap as statusFd.
func newLimitStatus() (*limitStatus, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	return &limitStatus{r: r, w: w}, nil
}

// started closes the worker's copy of the write end (bwrap has its own).
// The report, a few lines, fits in the pipe: it is read when finished.
func (s *limitStatus) started() {
	if s != nil {
		s.w.Close()
	}
}

// finish reads the report (the sandbox is gone, and with it every
// writer; the deadline only guards against one left behind) and closes
// the pipe.
func (s *limitStatus) finish() {
	if s == nil {
		return
	}
	_ = s.r.SetReadDeadline(time.Now().Add(tools.DrainGrace))
	s.report, _ = io.ReadAll(io.LimitReader(s.r, 4096))
	s.r.Close()
}

// close closes both ends, for a sandbox that did not start.
func (s *limitStatus) close() {
	if s != nil {
		s.r.Close()
		s.w.Close()
	}
}

// cpu is the CPU time (user and system) of the command's processes the
// limit shell waited for: its children and, as the kernel adds them up,
// the processes they waited for, once finished; 0 without a report.
func (s *limitStatus) cpu() time.Duration {
	if s == nil {
		return 0
	}
	return childrenCPU(string(s.report))
}

// timesField is one time of bash's `times`: minutes and seconds.
var timesField = regexp.MustCompile(`(\d+)m(\d+(?:\.\d+)?)s`)

// childrenCPU is the children's user plus system time of a `times`
// report, its second line ("0m1.942s 0m0.011s"); 0 when it has none.
func childrenCPU(report string) time.Duration {
	lines := strings.Split(strings.TrimSpace(report), "\n")
	if len(lines) < 2 {
		return 0
	}
	var sum time.Duration
	for _, m := range timesField.FindAllStringSubmatch(lines[1], 2) {
		min, _ := strconv.ParseInt(m[1], 10, 64)
		sec, _ := strconv.ParseFloat(m[2], 64)
		sum += time.Duration(min)*time.Minute + time.Duration(sec*float64(time.Second))
	}
	return sum
}
