// Corpus of real provider errors: testdata/errors.jsonl (one JSON object a
// line; testdata/README.md describes the fields and the sources).
//
// Tuning / held-out split, fixed once and checked here: a line belongs to
// the held-out half when the 32-bit FNV-1a hash of its "text" field (the
// UTF-8 bytes, as stored) is odd, and to the tuning half when it is even.
// The "split" field of every line must say the same ("tune" or "holdout");
// loadCorpus fails on a line that disagrees, so a text cannot be moved
// between halves by hand. Patterns in classify.go are changed only from
// misses in the tuning half; held-out misses are printed only with
//
//	go test -run TestCorpus -v ./retry/ -args -corpus.holdout
//
// so that they are looked at when reporting, not when tuning.
package retry

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"sort"
	"strings"
	"testing"
)

var showHoldoutMisses = flag.Bool("corpus.holdout", false, "print the held-out half's misses (for reporting, not for tuning)")

// corpusItem is one line of testdata/errors.jsonl: a real provider error
// text with its source, labelled with the class it should get.
type corpusItem struct {
	Text     string `json:"text"`
	Status   int    `json:"status,omitempty"`
	Type     string `json:"type,omitempty"`
	Label    Class  `json:"label"`
	Source   string `json:"source"`
	Provider string `json:"provider"`
	Split    string `json:"split"`
	Round    int    `json:"round"`
}

// Collection rounds (the "round" field, testdata/README.md): round 1 is
// the lines the classifier was first written from (seen whole, before the
// split existed); rounds 2 and later were added after the split, and
// their held-out lines' results were never looked at while tuning. The
// held-out lines of rounds laterFirstRound and later are the cleanest
// independent estimate.
const (
	firstRound  = 1
	latestRound = 11
	// laterFirstRound is the first round collected after the held-out
	// score of rounds 1 and 2 was known (issue 14): the held-out lines of
	// rounds laterFirstRound..latestRound are reported together, as the
	// larger independent estimate, and have their own floor.
	laterFirstRound = 3
	// roundBefore8 is the latest round when the first held-out floors
	// were set; heldOutFloors keeps them on rounds up to it.
	roundBefore8 = 7
	// round8 is the latest round when the next floors were set (before
	// the families, testdata/README.md).
	round8 = 8
	// round9 is the first round collected after the families were
	// written.
	round9 = 9
	// round10 is the latest round when the whole held-out half first
	// reached the 95% target (after the vocabulary probe), before
	// round 11 was added.
	round10 = 10
	// round11 was collected after the vocabulary probe and scored once
	// before its tuning (testdata/README.md).
	round11 = 11
)

// Corpus halves.
const (
	splitTune    = "tune"
	splitHoldout = "holdout"
)

// corpusSplit is the fixed split rule (see the file comment): FNV-1a 32 of
// the text, odd = held out.
func corpusSplit(text string) string {
	h := fnv.New32a()
	h.Write([]byte(text))
	if h.Sum32()&1 == 1 {
		return splitHoldout
	}
	return splitTune
}

// action is what the agent does with a class: the four classes collapse
// into three actions, and the action is what must be right.
func action(c Class) string {
	switch c {
	case ClassRetryable, ClassUsageLimit:
		return "retry"
	case ClassContextOverflow:
		return "compact"
	}
	return "stop"
}

func loadCorpus(t *testing.T) []corpusItem {
	t.Helper()
	f, err := os.Open("testdata/errors.jsonl")
	if err != nil {
		t.Fatalf("open corpus: %v", err)
	}
	defer f.Close()
	var items []corpusItem
	seen := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var it corpusItem
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&it); err != nil {
			t.Fatalf("corpus line %d: %v", line, err)
		}
		switch it.Label {
		case ClassRetryable, ClassUsageLimit, ClassContextOverflow, ClassFatal:
		default:
			t.Fatalf("corpus line %d: label %q is not one of retryable, usage_limit, context_overflow, fatal", line, it.Label)
		}
		if it.Text == "" || it.Source == "" || it.Provider == "" {
			t.Fatalf("corpus line %d: text, source and provider are required", line)
		}
		if want := corpusSplit(it.Text); it.Split != want {
			t.Fatalf("corpus line %d: split %q, but the fixed rule (FNV-1a 32 of the text, odd = holdout) puts it in %q", line, it.Split, want)
		}
		if it.Round < firstRound || it.Round > latestRound {
			t.Fatalf("corpus line %d: round %d, want %d to %d", line, it.Round, firstRound, latestRound)
		}
		if prev, dup := seen[it.Text]; dup {
			t.Fatalf("corpus line %d repeats the text of line %d", line, prev)
		}
		seen[it.Text] = line
		items = append(items, it)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read corpus: %v", err)
	}
	return items
}

// TestCorpus_Shape keeps the corpus honest: big enough, both halves
// populated in every class, every provider family the classifier claims to
// know is present, and composed texts (source "synthetic:<reason>") stay a
// small minority.
func TestCorpus_Shape(t *testing.T) {
	items := loadCorpus(t)
	if len(items) < 1400 {
		t.Fatalf("corpus has %d items, want at least 1400", len(items))
	}
	providers := map[string]int{}
	perSplit := map[string]map[Class]int{splitTune: {}, splitHoldout: {}}
	synthetic := 0
	for _, it := range items {
		providers[it.Provider]++
		perSplit[it.Split][it.Label]++
		if strings.HasPrefix(it.Source, "synthetic:") {
			synthetic++
			if len(strings.TrimPrefix(it.Source, "synthetic:")) < 10 {
				t.Errorf("synthetic item %q does not say why it was composed", it.Text)
			}
		} else if !strings.HasPrefix(it.Source, "https://") {
			t.Errorf("item %q: source %q is neither a URL nor synthetic:<reason>", it.Text, it.Source)
		}
	}
	if synthetic*20 >= len(items) {
		t.Errorf("%d of %d items are synthetic; keep them under 5%%", synthetic, len(items))
	}
	for _, s := range []string{splitTune, splitHoldout} {
		for _, c := range []Class{ClassRetryable, ClassUsageLimit, ClassContextOverflow, ClassFatal} {
			if perSplit[s][c] < 10 {
				t.Errorf("%s half has %d %s items, want at least 10", s, perSplit[s][c], c)
			}
		}
	}
	for _, p := range []string{"anthropic", "openai", "gemini", "vertex", "bedrock", "azure", "openrouter",
		"groq", "mistral", "xai", "deepseek", "moonshot", "qwen", "zhipu", "together", "fireworks", "cerebras",
		"copilot", "llama.cpp", "ollama", "vllm", "lmstudio", "tgi", "mlx",
		"transport-node", "transport-go", "transport-python", "transport-proxy"} {
		if providers[p] == 0 {
			t.Errorf("corpus has no %s errors", p)
		}
	}
}

// corpusScore is the tally of one half (or the whole) of the corpus.
type corpusScore struct {
	n, actionOK int
	per         map[Class]*classTally
	misses      []string
}

type classTally struct{ n, class, action int }

func (s *corpusScore) add(it corpusItem, got Classification) {
	if s.per == nil {
		s.per = map[Class]*classTally{}
	}
	tl := s.per[it.Label]
	if tl == nil {
		tl = &classTally{}
		s.per[it.Label] = tl
	}
	s.n++
	tl.n++
	if got.Class == it.Label {
		tl.class++
	}
	if action(got.Class) == action(it.Label) {
		tl.action++
		s.actionOK++
	}
	if got.Class != it.Label {
		mark := " "
		if action(got.Class) != action(it.Label) {
			mark = "!" // wrong action, not only the wrong retry branch
		}
		s.misses = append(s.misses, fmt.Sprintf("%s want %-16s got %-16s (%s) [%s] %.160q", mark, it.Label, got.Class, got.Pattern, it.Provider, it.Text))
	}
}

func (s *corpusScore) pct() float64 { return pct(s.actionOK, s.n) }

func (s *corpusScore) log(t *testing.T, name string) {
	t.Helper()
	t.Logf("== %s: action accuracy %d/%d = %.1f%%", name, s.actionOK, s.n, s.pct())
	classes := make([]string, 0, len(s.per))
	for c := range s.per {
		classes = append(classes, string(c))
	}
	sort.Strings(classes)
	t.Logf("   %-17s %5s %14s %14s", "label", "items", "class ok", "action ok")
	for _, c := range classes {
		tl := s.per[Class(c)]
		t.Logf("   %-17s %5d %8d %4.0f%% %8d %4.0f%%", c, tl.n, tl.class, pct(tl.class, tl.n), tl.action, pct(tl.action, tl.n))
	}
}

// Floors of TestCorpus_ClassifierOnRealErrors (SPEC 2). The target is the
// right action on at least 95% of the held-out half with no fatal error and
// no overflow retried. The floors are what the classifier honestly reaches
// (testdata/README.md has the history); raise them only when new
// tuning-half evidence improves the held-out score, never by moving lines
// between halves or relabelling held-out texts to fit.
const tuneFloorPct = 99.0

// heldOutFloor is a floor on the action accuracy of the held-out lines of
// collection rounds from..to.
type heldOutFloor struct {
	from, to int
	pct      float64
}

// heldOutFloors pins each floor to the rounds it was measured on: a new
// round of harder texts adds a floor for the larger population instead of
// lowering an old one, and an old floor only ever moves up (its
// population no longer changes, so it can only drop when a pattern change
// regresses it).
var heldOutFloors = []heldOutFloor{
	// The held-out half as it was before round 8: 429/468 = 91.7% before
	// the round-8 tuning (floor 91.5), 434/468 = 92.7% after it, 457/468
	// = 97.6% with the families, 458/468 = 97.9% after round 10's tuning,
	// 459/468 = 98.1% after the vocabulary probe (testdata/README.md).
	{firstRound, roundBefore8, 97.5},
	// Rounds 3 to 7, collected for issue 14: 190/217 = 87.6% before the
	// round-8 tuning (floor 87.5), 194/217 = 89.4% after it, 207/217 =
	// 95.4% with the families, 208/217 = 95.9% after round 10's tuning,
	// 209/217 = 96.3% after the vocabulary probe.
	{laterFirstRound, roundBefore8, 95.5},
	// The held-out half with round 8: 484/559 = 86.6% when round 8 was
	// added, 491/559 = 87.8% after its tuning, 533/559 = 95.3% with the
	// families, 534/559 = 95.5% after round 10's tuning, 535/559 = 95.7%
	// after the vocabulary probe.
	{firstRound, round8, 95.0},
	// Rounds 3 to 8 together: 245/308 = 79.5% when round 8 was added,
	// 251/308 = 81.5% after its tuning, 283/308 = 91.9% with the families,
	// 284/308 = 92.2% after round 10's tuning, 285/308 = 92.5% after the
	// vocabulary probe.
	{laterFirstRound, round8, 91.5},
	// The held-out half with round 9 (collected after the families were
	// written, scored once before any change: 596/628 = 94.9%), 597/628 =
	// 95.1% after the round-9 tuning, 598/628 = 95.2% after round 10's,
	// 599/628 = 95.4% after the vocabulary probe.
	{firstRound, round9, 95.0},
	// Rounds 3 to 9 together: 347/377 = 92.0%, 348/377 = 92.3%, 349/377 =
	// 92.6%.
	{laterFirstRound, round9, 91.5},
	// Round 9 alone: 64/69 = 92.8% before and after its tuning.
	{round9, round9, 92.5},
	// The whole held-out half with round 10 (collected after round 9's
	// tuning, scored once before any change: 668/705 = 94.8%), 669/705 =
	// 94.9% after round 10's tuning (floor 94.5), 671/705 = 95.2% after
	// the vocabulary probe.
	{firstRound, round10, 95.0},
	// Rounds 3 to 10 together: 419/454 = 92.3%, 421/454 = 92.7%.
	{laterFirstRound, round10, 92.0},
	// Round 10 alone: 71/77 = 92.2% before and after its tuning, 72/77 =
	// 93.5% after the vocabulary probe.
	{round10, round10, 92.0},
	// The whole held-out half with round 11 (collected after the
	// vocabulary probe, scored once before any change): 753/790 = 95.3%,
	// the same after round 11's tuning. The classifier as it was before
	// the probe (4057167) scored 751/790 = 95.1% on it.
	{firstRound, round11, 95.0},
	// Rounds 3 to 11 together: 503/539 = 93.3%.
	{laterFirstRound, round11, 93.0},
	// Round 11 alone: 82/85 = 96.5% before and after its tuning (and
	// before the probe; the classifier before the families: 76/85).
	{round11, round11, 96.0},
}

// TestCorpus_ClassifierOnRealErrors is SPEC 2 measured on real error texts.
// It reports the classifier's action accuracy (retry / compact / stop) on
// the tuning half, on the held-out half, on the held-out lines of each
// collection round, and on those of rounds laterFirstRound..latestRound
// together (collected for issue 14 and never scored line by line while
// tuning: the cleanest independent estimate), per class, and the fatal
// errors and overflows that would be retried. It fails below the floors above
// (heldOutFloors, each pinned to its rounds) or when any fatal error or
// overflow would be retried. With go test -v it prints
// the tuning half's misses ("!" = wrong action); held-out texts are printed
// only with -args -corpus.holdout, for reporting, never for tuning.
func TestCorpus_ClassifierOnRealErrors(t *testing.T) {
	items := loadCorpus(t)
	var all corpusScore
	halves := map[string]*corpusScore{splitTune: {}, splitHoldout: {}}
	heldByRound := map[int]*corpusScore{}
	var heldLater corpusScore
	type wrongRetry struct{ fatal, overflow []string }
	retried := map[string]*wrongRetry{splitTune: {}, splitHoldout: {}}
	for _, it := range items {
		got := Classify(Outcome{StopReason: "error", ErrorMessage: it.Text, ErrorStatus: it.Status, ErrorType: it.Type})
		all.add(it, got)
		halves[it.Split].add(it, got)
		if it.Split == splitHoldout {
			if heldByRound[it.Round] == nil {
				heldByRound[it.Round] = &corpusScore{}
			}
			heldByRound[it.Round].add(it, got)
			if it.Round >= laterFirstRound {
				heldLater.add(it, got)
			}
		}
		if !got.Class.Retryable() {
			continue
		}
		line := fmt.Sprintf("[%s] (%s) %q", it.Provider, got.Pattern, it.Text)
		switch it.Label {
		case ClassFatal:
			retried[it.Split].fatal = append(retried[it.Split].fatal, line)
		case ClassContextOverflow:
			retried[it.Split].overflow = append(retried[it.Split].overflow, line)
		}
	}
	all.log(t, "whole corpus")
	halves[splitTune].log(t, "tuning half")
	halves[splitHoldout].log(t, "held-out half")
	for r := firstRound; r <= latestRound; r++ {
		if s := heldByRound[r]; s != nil {
			name := fmt.Sprintf("held-out lines of round %d", r)
			switch r {
			case firstRound:
				name += " (seen when the classifier was first written)"
			case latestRound:
				name += " (added in the latest round, never seen while tuning)"
			}
			s.log(t, name)
		}
	}
	heldLater.log(t, fmt.Sprintf("held-out lines of rounds %d to %d together (collected for issue 14, never seen while tuning)", laterFirstRound, latestRound))
	for _, m := range halves[splitTune].misses {
		t.Log("tune miss: " + m)
	}
	if *showHoldoutMisses {
		for _, m := range halves[splitHoldout].misses {
			t.Log("holdout miss: " + m)
		}
	}
	tr, hr := retried[splitTune], retried[splitHoldout]
	t.Logf("fatal errors retried: %d (tuning %d, held-out %d); overflows retried: %d (tuning %d, held-out %d)",
		len(tr.fatal)+len(hr.fatal), len(tr.fatal), len(hr.fatal),
		len(tr.overflow)+len(hr.overflow), len(tr.overflow), len(hr.overflow))
	if p := halves[splitTune].pct(); p < tuneFloorPct {
		t.Errorf("tuning half: action accuracy %.1f%% is below %.1f%%", p, tuneFloorPct)
	}
	for _, f := range heldOutFloors {
		ok, n := heldOutRounds(heldByRound, f.from, f.to)
		t.Logf("held-out lines of rounds %d to %d: %d/%d = %.1f%% (floor %.1f%%)", f.from, f.to, ok, n, pct(ok, n), f.pct)
		if p := pct(ok, n); p < f.pct {
			t.Errorf("held-out lines of rounds %d to %d: action accuracy %.1f%% is below %.1f%% (misses: -args -corpus.holdout)", f.from, f.to, p, f.pct)
		}
	}
	for _, w := range []struct {
		what string
		tune []string
		held []string
	}{
		{"fatal errors would be retried", tr.fatal, hr.fatal},
		{"context overflows would be retried instead of compacted", tr.overflow, hr.overflow},
	} {
		if len(w.tune) > 0 {
			t.Errorf("%d %s (tuning half):\n%s", len(w.tune), w.what, strings.Join(w.tune, "\n"))
		}
		if len(w.held) == 0 {
			continue
		}
		if *showHoldoutMisses {
			t.Errorf("%d %s (held-out half):\n%s", len(w.held), w.what, strings.Join(w.held, "\n"))
		} else {
			t.Errorf("%d %s (held-out half; listed with -args -corpus.holdout)", len(w.held), w.what)
		}
	}
}

// heldOutRounds sums the held-out lines of rounds from..to: right actions
// and lines.
func heldOutRounds(byRound map[int]*corpusScore, from, to int) (ok, n int) {
	for r := from; r <= to; r++ {
		if s := byRound[r]; s != nil {
			ok += s.actionOK
			n += s.n
		}
	}
	return ok, n
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// The hard cases of the corpus as rules (SPEC 2): look-alikes that must
// land on the other side of the line.
func TestClassify_HardCases(t *testing.T) {
	cases := []struct {
		name string
		o    Outcome
		want Class
	}{
		{"TPM request too large is an overflow, not a rate limit",
			Outcome{StopReason: "error", ErrorStatus: 429, ErrorType: "rate_limit_exceeded",
				ErrorMessage: "Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 36278. The input or output tokens must be reduced in order to run successfully."},
			ClassContextOverflow},
		{"TPM request too large with a retry-after header still goes to compaction",
			Outcome{StopReason: "error", ErrorStatus: 429, ErrorType: "tokens", RetryAfterMs: new(int64(2000)),
				ErrorMessage: "Request too large for model `llama-3.3-70b-versatile` on tokens per minute (TPM): Limit 6000, Requested 14810, please reduce your message size and try again."},
			ClassContextOverflow},
		{"Bedrock token throttle is a rate limit, not an overflow",
			Outcome{StopReason: "error", ErrorStatus: 429, ErrorMessage: "Too many tokens, please wait before trying again."}, ClassRetryable},
		{"Bedrock daily token throttle is a usage limit",
			errOutcome("ThrottlingException: Too many tokens per day, please wait before trying again."), ClassUsageLimit},
		{"500 whose body is a context-size error",
			Outcome{StopReason: "error", ErrorStatus: 500, ErrorType: "server_error", ErrorMessage: `{"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}`},
			ClassContextOverflow},
		{"max_tokens above the model's output limit is fatal",
			Outcome{StopReason: "error", ErrorStatus: 400, ErrorType: "invalid_request_error", ErrorMessage: "max_tokens: 128001 > 64000, which is the maximum allowed number of output tokens for claude-opus-4-5"},
			ClassFatal},
		{"a completion budget filling the window is fatal, not an overflow",
			errOutcome("This model's maximum context length is 8192 tokens. However, you requested 8256 tokens (64 in the messages, 8192 in the completion). Please reduce the length of the messages or completion."),
			ClassFatal},
		{"the same wording with a long input is an overflow",
			errOutcome("This model's maximum context length is 4097 tokens. However, you requested 4203 tokens (3703 in the messages, 500 in the completion). Please reduce the length of the messages or completion."),
			ClassContextOverflow},
		{"credits asked for fewer max_tokens is a usage limit, not fatal",
			Outcome{StopReason: "error", ErrorStatus: 402, ErrorMessage: "This request requires more credits, or fewer max_tokens. You requested up to 64000 tokens, but can only afford 2666."},
			ClassUsageLimit},
		{"credit balance too low beats its 400 invalid_request_error",
			Outcome{StopReason: "error", ErrorStatus: 400, ErrorType: "invalid_request_error", ErrorMessage: "Your credit balance is too low to access the Anthropic API."},
			ClassUsageLimit},
		{"your account's rate limit is a usage limit",
			Outcome{StopReason: "error", ErrorStatus: 429, ErrorType: "rate_limit_error", ErrorMessage: "This request would exceed your account's rate limit. Please try again later."},
			ClassUsageLimit},
		{"a daily 429 is a usage limit",
			errOutcome("429 Rate limit reached for model `llama-3.3-70b-versatile` on tokens per day (TPD): Limit 100000, Used 97050, Requested 3619."),
			ClassUsageLimit},
		{"a per-minute quota is a rate limit",
			errOutcome("Quota exceeded for quota metric 'Generate Content API requests per minute'"), ClassRetryable},
		{"Vertex resource exhausted, try again later, is a rate limit",
			Outcome{StopReason: "error", ErrorType: "RESOURCE_EXHAUSTED", ErrorMessage: "Resource exhausted. Please try again later."}, ClassRetryable},
		{"capacity trouble sent as invalid_request_error is retryable",
			Outcome{StopReason: "error", ErrorType: "invalid_request_error", ErrorMessage: "Service tier capacity exceeded for this model."}, ClassRetryable},
		{"a missing model is fatal whatever the type says",
			Outcome{StopReason: "error", ErrorType: "api_error", ErrorMessage: `model "llama9" not found, try pulling it first`}, ClassFatal},
		{"a key error is fatal on a 400 too",
			errOutcome(`400 "Incorrect API key provided: gs***tF. You can obtain an API key from https://console.x.ai."`), ClassFatal},
		{"Moonshot rate_limit_reached_error is a rate limit, not a usage limit",
			errOutcome(`429 {"error":{"message":"Organization Rate limit exceeded, please try again after 1 seconds","type":"rate_limit_reached_error"}}`),
			ClassRetryable},
		{"plan_limit_reached stays a usage limit",
			errOutcome(`{"error":{"code":"plan_limit_reached"}}`), ClassUsageLimit},
		{"a Claude Code plan window is a usage limit",
			errOutcome("5-hour limit reached ∙ resets 5am"), ClassUsageLimit},
		{"Cerebras per-minute token throttle is a rate limit, not an overflow",
			errOutcome("Tokens per minute limit exceeded - too many tokens processed"), ClassRetryable},
		{"Qwen input range wrapped in InternalError is an overflow, not a server error",
			errOutcome("OpenAI API error: 400 <400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 204800]"),
			ClassContextOverflow},
		{"TGI inputs + max_new_tokens is an overflow",
			errOutcome("Input validation error: `inputs` tokens + `max_new_tokens` must be <= 2048. Given: 3474 `inputs` tokens and 60 `max_new_tokens`"),
			ClassContextOverflow},
		{"Bedrock access denied wrapped in APIConnectionError is fatal",
			errOutcome(`litellm.APIConnectionError: BedrockException - {"message":"Model access is denied due to IAM user or service role is not authorized to perform the required AWS Marketplace actions"}`),
			ClassFatal},
		{"a Cloudflare 524 by status code is retryable",
			errOutcome("Failed to invoke tool: Request failed with status code 524 and <!DOCTYPE html>"), ClassRetryable},
		{"a 52x-looking number that is not a status does not retry",
			errOutcome("max_tokens must be at most 5240, got status code 52400"), ClassFatal},
		{"DNS failure is a transport failure",
			errOutcome("FetchError: request to https://api.openai.com/v1/completions failed, reason: getaddrinfo ENOTFOUND api.openai.com"),
			ClassRetryable},
		{"a Chinese gateway's try-again-later is retryable",
			errOutcome("接口返回：请求过于频繁,请稍后再试"), ClassRetryable},
		{"undici terminated is a transport failure",
			errOutcome("TypeError: terminated"), ClassRetryable},
		{"Go EOF before the response is a transport failure",
			errOutcome(`Post "https://api.openai.com/v1/chat/completions": EOF`), ClassRetryable},
		{"Go context deadline is a transport failure",
			errOutcome("context deadline exceeded (Client.Timeout or context cancellation while reading body)"), ClassRetryable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Classify(tc.o)
			if got.Class != tc.want {
				t.Fatalf("Classify(%q) = %q (pattern %q), want %q", tc.o.ErrorMessage, got.Class, got.Pattern, tc.want)
			}
		})
	}
}

// A rate limit that asks for a wait of UsageLimitHintMs or more is a
// usage limit (the credential is blocked for the hint); a shorter one
// stays a rate limit.
func TestClassify_LongRetryHintIsUsageLimit(t *testing.T) {
	cases := []struct {
		name string
		msg  string
		want Class
	}{
		{"Azure daily token limit", "429 Requests to the ChatCompletions_Create Operation have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 86400 seconds.", ClassUsageLimit},
		{"ten minutes exactly", "429 rate limit; retry-after-ms=600000", ClassUsageLimit},
		{"just under", "429 rate limit; retry-after-ms=599999", ClassRetryable},
		{"a minute", "429 rate limit; retry-after: 60", ClassRetryable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Classify(errOutcome(tc.msg))
			if got.Class != tc.want || !got.HasHint {
				t.Fatalf("Classify(%q) = %+v, want %q with a hint", tc.msg, got, tc.want)
			}
		})
	}
}
