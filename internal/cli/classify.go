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
	fs := pflag.NewFlagSet("classify", pflag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	jsonl := fs.Bool("jsonl", false, `read JSON lines {"message": "...", "status": 429, "type": "..."} instead of plain text lines`)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return ExitOK
		}
		return fail(env, "classify", err)
	}
	if fs.NArg() > 0 {
		return fail(env, "classify", fmt.Errorf("unexpected argument %q (usage: %s)", fs.Arg(0), classifyUsage))
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
		c := retry.ClassifyAt(o, time.Now())
		out := classifyOutput{Class: c.Class, Pattern: c.Pattern}
		if c.HasHint {
			ms := c.RetryAfterMs
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
