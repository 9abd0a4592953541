package cli

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/durableagent/durableagent/retry"
)

const classifyUsage = "starter classify [--jsonl] < errors"

// classifyInput is one --jsonl input line. "text" is accepted for
// "message" so the classifier's corpus (retry/testdata/errors.jsonl) can
// be piped in as it is.
type classifyInput struct {
	Message     string `json:"message"`
	Text        string `json:"text"`
	Status      int    `json:"status"`
	Type        string `json:"type"`
	ShouldRetry *bool  `json:"shouldRetry"`
}

// classifyOutput is one output line.
type classifyOutput struct {
	Class        retry.Class `json:"class"`
	RetryAfterMs *int64      `json:"retryAfterMs"`
	Pattern      string      `json:"pattern"`
}

// runClassify reads error texts, one per line (or JSON lines with a
// message field, plus optional status, type and shouldRetry, with
// --jsonl), and writes one JSON line per input: the class, the retry hint
// in ms (null without one) and the pattern that decided. Blank lines are
// skipped. Date and epoch hints are read against the wall clock.
func runClassify(ctx context.Context, env Env, args []string) int {
	c := &common{fs: pflag.NewFlagSet("classify", pflag.ContinueOnError), env: env} // no settings flags: it reads none
	jsonl := c.fs.Bool("jsonl", false, `read JSON lines {"message": "...", "status": 429, "type": "..."} instead of plain text lines`)
	if !c.parseArgs(env, args, 0, classifyUsage) {
		return ExitUsage
	}
	sc := bufio.NewScanner(env.Stdin)
	sc.Buffer(nil, maxClassifyLine)
	enc := json.NewEncoder(env.Stdout)
	enc.SetEscapeHTML(false)
	line := 1
	for ; sc.Scan(); line++ {
		raw := sc.Text()
		if strings.TrimSpace(raw) == "" {
			continue
		}
		o := retry.Outcome{StopReason: "error", ErrorMessage: raw}
		if *jsonl {
			var in classifyInput
			if err := json.Unmarshal([]byte(raw), &in); err != nil {
				return fail(env, "classify", fmt.Errorf("line %d: not a JSON object: %w", line, err))
			}
			o.ErrorMessage = cmp.Or(in.Message, in.Text)
			o.ErrorStatus, o.ErrorType, o.ShouldRetry = in.Status, in.Type, in.ShouldRetry
		}
		cl := retry.ClassifyAt(o, time.Now())
		out := classifyOutput{Class: cl.Class, Pattern: cl.Pattern}
		if cl.HasHint {
			ms := cl.RetryAfterMs
			out.RetryAfterMs = &ms
		}
		if err := enc.Encode(out); err != nil {
			return fail(env, "classify", err)
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return fail(env, "classify", fmt.Errorf("line %d: longer than %d bytes (4 MiB), the limit for one error text; nothing after it was classified", line, maxClassifyLine))
	} else if err != nil {
		return fail(env, "classify", fmt.Errorf("read stdin: line %d: %w", line, err))
	}
	return ExitOK
}

// maxClassifyLine bounds one input line (the scanner's buffer): provider
// error bodies are kilobytes, a longer line is not an error text.
const maxClassifyLine = 4 << 20
