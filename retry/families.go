package retry

import (
	"slices"
	"strconv"
	"unicode/utf8"
)

// Families: the classifier's second line, for texts no specific wording
// in classify.go matched (docs/spec.md 2.8). The specific patterns each
// answer a wording seen in a real error (retry/testdata/errors.jsonl);
// the families are written from the vocabularies themselves (the error
// names of runtimes and HTTP clients, RFC 9110 reason phrases and
// Cloudflare's 52x pages, gRPC status names, "busy", "try again later",
// "quota", "too long" in the languages coding agents are used in) and
// are broad on purpose. What keeps them from retrying an error no wait
// can fix are the vetoes (bannedEvidence, accountEvidence, and
// requestEvidence for the weaker words), which also override a specific
// retryable wording (classifyError, rule 10).
//
// Order of use (ClassifyAt's precedence):
//   - overflowFamily is part of rule 2 (an overflow wins over a status
//     or a retryable word in the same text) unless the text is about the
//     answer budget, a per-minute throttle or one oversized part
//     (overflowFamilyVeto);
//   - familyVerdict comes last, just before the fatal default (rule 11):
//     usageFamily, strongRetryable, htmlBody, weakRetryable, each behind
//     its veto.

// overflowFamily: something the request carries (prompt, input,
// conversation, messages, context, tokens) is too long for, or exceeds,
// a window (context, KV cache, sequence length, n_ctx), or the window
// itself is full.
var overflowFamily = patterns(
	// "<what the request carries> ... too long / too big / exceeds ... <the window or its limit>"
	`\b(?:prompt|input|conversation|messages|context|history|request|tokens?)\b[^.\n]{0,40}?(?:too (?:long|large|big)|exceed(?:s|ed|ing)?|greater than|longer than|larger than|more than)\b[^.\n]{0,40}?\b(?:context|window|kv|n_ctx|ctx|max_seq_len|seq(?:uence)?[ _]?len(?:gth)?|max_model_len|max_position_embeddings|(?:token|context|length|size|configured|model'?s?) limit|limit of \d|max(?:imum)? length|maximum)`,
	// "the context (window) is full / overflowed / too small", "context
	// length exceeded", ContextWindowExceededError
	`\b(?:context|kv[ -]?cache|ctx)(?: window| size| length)?\s+(?:is |was |has been )?(?:full|overflow(?:ed)?|too small|exhausted)\b`,
	`(?:\b|_)context[\s_-]?(?:length|window|limit|size)s?[\s_-]*(?:has\s+been\s+|was\s+|is\s+)?(?:exceed|too)`,
	// "inputs must have less than 512 tokens"
	`\b(?:inputs?|prompt|messages|context|conversation)\b[^.\n]{0,20}?\bmust (?:have|be|contain) (?:less|fewer|shorter) than [\d,]+ tokens`,
	// "prompt has 49202 tokens, but the configured context size is 49152",
	// "the provided prompt is 4309 tokens long, ... but the maximum"
	`\b(?:prompt|input|request|conversation)\b[^.\n]{0,20}?\b(?:is|has|contains|of) [\d,]+ tokens\b[^\n]{0,80}?\b(?:but|exceeds?|greater|maximum|max|limit|context size|context length)`,
	// "conversation too long", "prompt too large", "messages are too long"
	`\b(?:conversation|prompt|input|context|messages?)[\s_]+(?:is[\s_]+|are[\s_]+)?too[\s_]+(?:long|large|big)\b`,
	// "too many input tokens"; "exceeds the model's token limit", "over
	// the token limit of the model" (a limit of "your" account is a usage
	// limit, not a window); "does not fit in the context"; "not enough
	// context space"; llama.cpp's n_ctx / n_ctx_slot exceeded.
	`\btoo many (?:input|prompt|context|request) tokens\b`,
	`\b(?:exceed(?:s|ed|ing)?|over|above|beyond) (?:the |its )?(?:model'?s? |maximum |max |context )?token limit\b`,
	`\b(?:does not|doesn't|do not|don't|cannot|can't|won't|will not|could not|couldn't) fit (?:in|into|within) (?:the |its )?(?:model'?s? )?(?:context|window|n_ctx)`,
	`\bnot enough (?:context (?:space|room|left|length|size)|(?:room|space) (?:left )?in (?:the )?context)`,
	`\bn_ctx(?:_slot|_train)?\b[^.\n]{0,20}?\b(?:exceed(?:s|ed)?|too small|full|overflow)`,
	// "prompt over 30,000 characters", "input above 128k tokens"
	`\b(?:prompt|input|conversation|context)\s+(?:is\s+)?(?:over|above)\s+[\d,.]+\s*k?\s*(?:characters|chars|tokens)\b`,
	// "exceeded (the) maximum context length", "maximum context length is N"
	`\bexceed(?:s|ed)?\s+(?:the\s+)?(?:maximum|max|configured|model'?s?|available)?\s*(?:context|ctx|window)`,
	`\bmax(?:imum)? (?:context|ctx|sequence|prompt) (?:length|size|window)\b`,
	`out of (?:room|space)[^.\n]{0,30}?\bcontext\b`,
	// a request body above the endpoint's size limit
	`(?:payload|entity|request|body) (?:is )?too large`, `(?:request|body|payload)[ _]?size[^.\n]{0,30}?exceed`,
	`exceeds? (?:the )?maximum (?:allowed )?(?:request|content|body|payload)`,
	// the window in other languages: 上下文 (context) with 超过/超出 (exceeds) or
	// 过长 (too long); コンテキスト with 超え / 長すぎ; 컨텍스트 with 초과.
	`上下文[^。\n]{0,20}?(?:超过|超出|过长|太长|上限)|(?:超过|超出)[^。\n]{0,20}?上下文`,
	`コンテキスト[^。\n]{0,20}?(?:超え|長すぎ|上限)`,
	`컨텍스트[^.\n]{0,20}?(?:초과|한도)`,
)

// overflowFamilyVeto: texts the broad overflow family must leave alone.
// An answer budget (max_tokens, max_new_tokens, output or completion
// tokens) is a setting, a per-minute or per-day token throttle is a rate
// limit, and one part too large (an image, a file, a string field, a
// tool description) is a request no compaction fixes.
var overflowFamilyVeto = patterns(
	`max_(?:new_|completion_|output_)?tokens`, `\bmax(?:imum)? tokens\b`, `\b(?:output|completion) tokens?\b`,
	`per (?:minute|min|second|sec|hour|day)\b`, `\b[tr]pm\b`, `\b[tr]pd\b`, `rate.?limit`, `throttl`, `quota`, `\busage\b`, `too many requests`,
	`\bimage\b`, `\bfile (?:size|is too|too|exceeds)`, `\bstring\b`, `\bfield\b`, `\bdescription\b`, `\bparameter\b`,
)

// bannedEvidence: the account or the content is refused outright (a
// ban, a suspension, abuse detection, a policy the content violates, an
// organisation that must be verified). No family verdict applies, not
// even a usage limit: another wait or credential does not undo it.
var bannedEvidence = patterns(
	`suspended`, `banned`, `disabled`, `deactivated`, `terminated (?:your|the) account`, `account (?:has been|was) (?:closed|locked|blocked)`,
	`\babuse`, `\bfraud`, `blocked`, `flagged`, `\bviolat(?:e|es|ed|ing)\b`, `polic(?:y|ies) violation`,
	`(?:content|usage|safety|acceptable use|data) polic(?:y|ies)`, `management policy`, `against (?:our|the) (?:terms|polic)`,
	`safety`, `moderation`, `inappropriate`, `sensitive`, `content.?filter`, `\brisk\b`,
	`verif(?:y|ied|ication)`,
)

// unpaidSuspension: an account suspended or disabled for want of
// payment is a billing state, not a ban: another credential may work, and
// paying ends it.
var unpaidSuspension = patterns(
	`(?:suspended|disabled|deactivated|blocked|paused)[^.\n]{0,20}?\b(?:due to|because of|for)\b[^.\n]{0,10}?\b(?:insufficient|unpaid|overdue|non-?payment|billing|low|negative|outstanding)`,
)

// accountEvidence: the text names a problem with the key, the model or
// the request that no wait, credential switch or compaction fixes. A text
// with any of these takes no retryable family verdict (a usage wording
// still wins: "access denied, make sure your account is in good
// standing", "402 Payment Required: insufficient balance").
var accountEvidence = patterns(
	`unauthori[sz]ed`, `unauthenticated`, `permission`, `access denied`, `not allowed`, `not permitted`,
	`malformed`, `unsupported`, `(?:not|isn.t|aren.t) supported`, `does not support`, `unknown (?:model|parameter|field|variant)`,
	`not found`, `does not exist`, `no such model`, `decommissioned`, `deprecated`, `not available in`,
	`(?:invalid|incorrect|wrong|missing|no|expired|revoked|bad|unknown|disabled)[^.\n]{0,20}?api.?key`,
	`api.?key[^.\n]{0,30}?(?:invalid|not valid|incorrect|missing|not found|expired|revoked|required|disabled)`,
	`credentials?\b`, `(?:key|token|session|credential|certificate|password|login|oauth)s? (?:has |have |is |was )?(?:expired|revoked|invalid)`,
	`must (?:be|have|not|contain)`, `required`, `schema`, `validationexception`,
	`certificate`, `\bpkix\b`, `\bx509\b`, `cert_`, `ssl: `, `tls: `,
	`not implemented`, `\bunimplemented\b`, `\b501\b`, `\b505\b`,
	`(?:region|country|territory|location)[^.\n]{0,30}?not (?:supported|available)`, `unsupported_country`,
	`max_(?:new_|completion_|output_)?tokens`,
	`\bimages?\b[^.\n]{0,30}?(?:exceed|too (?:large|big|many)|invalid|unsupported|could not|cannot|dimension|maximum)`, `(?:process|decode|read) (?:the )?image`,
	`\bpdf\b`, `\battachment`, `\bfile (?:size|is too|too|exceeds)`,
	`(?:system|gpu|cuda|available) memory`, `out of memory`, `\boom\b`, `(?:error|failed to|unable to|cannot|could not) load(?:ing)? (?:the )?model`, `unable to allocate`,
)

// requestEvidence: weaker signs of a client-side error (a 4xx status
// other than 408 timeout, 409 conflict, 429 rate limit and 402 payment,
// "bad request", "invalid", "forbidden"). They veto the weak retryable
// words ("busy", "try again", "later") but not a strong sign of a
// transport or server failure (a 5xx status, an HTML page where JSON was
// expected, a runtime's transport error): gateways answer a cut stream
// with "400 invalid response body", and a JSON parser handed an HTML
// page says "invalid character '<'".
//
// "Try again with a different prompt" asks for another request, not a
// wait; a model or route "not configured" on a gateway stays so.
var requestEvidence = append(statusEvidence, patterns(`bad request`, `invalid`, `forbidden`,
	`try (?:it )?again with (?:a |an )?(?:different|another|new|valid|correct|smaller|shorter|modified)`, `could not understand`, `not configured`)...)

// usageFamily: a plan, quota, credit, subscription or billing allowance
// that is used up, in English and the languages agent users write in.
var usageFamily = patterns(
	`\b(?:quota|credits?|billing|plan|subscription|allowance|overage|trial|balance|budget|spend(?:ing)?|tokens? left|usage)\b[^.\n]{0,40}?\b(?:exceeded|reached|exhausted|depleted|insufficient|used up|run out|ran out|limit|no (?:more|longer)|not enough|over|expired|overdue|remaining: 0|too low)`,
	`\b(?:exceeded|reached|exhausted|used up|run out of|ran out of|out of|no more|not enough|(?:not|n't) have enough|insufficient|no)\b[^.\n]{0,30}?\b(?:quota|credits?|allowance|plan|subscription|balance|budget|usage|resource package)\b`,
	// round 11 (tuning half): a plan's model limit with its fallback,
	// Claude Code "Claude Opus 4 limit reached, now using Sonnet 4"
	`\blimit reached\b[^.\n]{0,10}?\b(?:now using|switching to|falling back to)\b`,
	// a plan's window that resets at a time ("limit reached · resets 5am")
	`\blimit\b[^.\n]{0,30}?\bresets?\b`, `\b(?:hourly|daily|weekly|monthly|session|key|plan|free|trial|account) (?:\w+ )?limit\b`, `\bquota ?limit\b`,
	`\boverages?\b`, `\barrear`, `good standing`, `\bbilling\b`,
	`\b(?:upgrade|purchase|buy|top up|recharge|add (?:more )?credits)\b[^.\n]{0,40}?\b(?:plan|pro|subscription|credits?|tier|more)\b`,
	`\boverdue\b`, `\bpayment (?:required|overdue|failed)`, `\b402\b`,
	// "you have used all of today's free usage", "your free usage resets at",
	// "you have reached the limit"
	`\bused (?:all|up)\b[^.\n]{0,30}?\b(?:usage|quota|credits?|allowance|requests|tokens)\b`,
	`\b(?:usage|quota|credits?|allowance)\b[^.\n]{0,30}?\bresets?\b`,
	`\breached (?:the|your|its) (?:\w+ )?limit\b`, `requires (?:more |paid )?(?:credits|balance)`,
	// Chinese 配额/额度/余额 (quota, allowance, balance) with 不足/用完/耗尽/超出 (short,
	// used up, exhausted, exceeded), 欠费 (arrears), 套餐 (plan) limits;
	// Japanese 利用上限/使用量の上限/クォータ; Korean 한도/할당량 초과; Portuguese and
	// Spanish cota/cuota/límite de uso, Russian квота / лимит использования.
	`(?:配额|额度|余额|用量|套餐)[^。\n]{0,15}?(?:不足|用完|用尽|耗尽|超出|超过|上限|已满)`, `欠费`,
	`(?:利用上限|使用量の上限|クォータ|利用制限|上限に達し)`,
	`(?:한도|할당량|사용량)[^.\n]{0,15}?(?:초과|도달|소진)`,
	`\b(?:cota|cuota|l[ií]mite de uso|limite d'utilisation|nutzungslimit|квот[аы]|лимит использования)\b`,
)

// strongRetryable: a server, gateway, CDN or transport failure as the
// status lines, runtimes and HTTP clients name it. Only accountEvidence
// vetoes these.
var strongRetryable = patterns(
	// HTTP: the 5xx statuses a retry can get past, as whole numbers
	// (500, 502-504, 507-508, Cloudflare's 520-527 and 530, 529
	// overloaded, 598-599 network timeouts), and RFC 9110 reason phrases
	// of the retryable statuses.
	`\b5(?:0[02-48]|2[0-79]|30|9[89])\b`,
	`internal (?:server )?error`, `bad gateway`, `upstream connect error`, `reset before headers`, `service (?:temporarily )?unavailable`, `gateway time-?out`, `request time-?out`,
	`too early`, `insufficient storage`, `network (?:connect|read) timeout`, `too many requests`,
	// Timeouts in every spelling: "timeout", "timed out", "time-out",
	// TimeoutError, ReadTimeout, ETIMEDOUT, DEADLINE_EXCEEDED.
	`time[ -]?out`, `timed[ -]?out`, `deadline`,
	// Node system errors and undici / fetch codes (a DNS lookup that
	// failed, ENOTFOUND or EAI_AGAIN, counts: it is the network's
	// answer for now, not the provider's).
	`\be(?:conn(?:reset|refused|aborted)|timedout|pipe|hostunreach|netunreach|netdown|ai_again|addrnotavail|proto|notfound)\b`,
	`\bund_err_[a-z_]+`, `err_stream_premature_close`, `err_http2_[a-z_]+`, `err_socket_[a-z_]+`, `err_network`,
	`socket hang ?up`, `network ?error`, `network (?:request )?failed`, `failed to fetch`, `fetch failed`,
	`(?:^|:\s*)terminated\s*$`, `unexpected end of (?:json|input|stream|file|data)`, `expected a completed response`,
	// Python requests / urllib3 / httpx / aiohttp / asyncio / SDK
	// exception names.
	`remotedisconnected`, `remote end closed`, `protocolerror`, `chunkedencodingerror`, `invalidchunklength`, `connectionerror`,
	`connect(?:ion)?timeout`, `readtimeout`, `writetimeout`, `pooltimeout`, `readerror`, `writeerror`, `remoteprotocolerror`, `connecterror`,
	`serverdisconnected`, `clientpayloaderror`, `clientconnectorerror`, `clientoserror`, `serverconnectionerror`,
	`connectionreseterror`, `connectionabortederror`, `connectionrefusederror`, `incompleteread`, `apiconnectionerror`, `apitimeouterror`,
	`internalservererror`, `serviceunavailableerror`, `overloadederror`, `ratelimiterror`, `toomanyrequests`, `jsondecodeerror`,
	// Go net and net/http.
	`use of closed network connection`, `server closed idle connection`, `connection reset by peer`, `no route to host`,
	`network is unreachable`, `http2: [a-z ]*(?:stream|connection|goaway|reset)`, `\beof\b`,
	// JVM (java.net, OkHttp, Ktor), .NET and Rust (hyper, reqwest).
	`socketexception`, `connectexception`, `eofexception`, `streamresetexception`, `interruptedioexception`,
	`httprequestexception`, `ioexception`, `taskcanceledexception`, `forcibly closed`, `ended prematurely`,
	`incompletemessage`, `error sending request`, `connection closed before`, `error decoding response body`, `error trying to connect`,
	`hyper::error`, `body write aborted`,
	// Cut streams and empty answers in plain words.
	`\b(?:connection|socket|stream|network|transport|channel|pipe)\b[^.\n]{0,40}?\b(?:closed|reset|lost|dropped|aborted|interrupted|broken|ended|cut|failed|error|disconnected|unexpected|refused)`,
	`\b(?:cannot|can't|could not|couldn't|unable to|failed to) (?:connect|reach)\b`,
	`\b(?:ended|terminated|closed|finished) (?:early|prematurely|unexpectedly|abruptly)`, `\bprematurely\b`,
	`\b(?:empty|incomplete|truncated|partial) (?:response|reply|body|stream)\b`, `\bno response (?:from|received)\b`,
	`overload`, `\bunavailable\b`,
	`\b(?:408|429)\b`,
	`\bserver (?:had|has|experienced|encountered|returned) an? (?:\w+ )?error`,
	`(?:empty|unparsable|unparseable)\b[^.\n]{0,20}?\bresponse`, `invalid response body`, `could not parse (?:the )?(?:http )?response`,
)

// htmlBody: an HTML page where a JSON answer was expected, a proxy's or
// CDN's error page, or a JSON parser choking on one ("Unexpected token
// '<'", Go's "invalid character '<'", Jackson's "Unexpected character
// ('<'"). Such a page is what a gateway sends when the upstream broke,
// so the parser's "invalid" does not veto it; a page that names a 4xx
// status (statusEvidence: "403 Forbidden") does.
var htmlBody = patterns(
	`<!doctype html`, `<html\b`, `<title>`, `'<'`, `"<"`, `\(<\)`, `\bcloudflare\b`, `\bcf-ray\b`, `\bnginx\b`, `\bopenresty\b`,
)

// statusEvidence: a whole-number 4xx status other than 408 (timeout),
// 409 (conflict), 429 (rate limit) and 402 (payment).
var statusEvidence = patterns(`\b4(?:0[013-7]|1[0-8]|2[0-268]|3[01]|51)\b`)

// weakRetryable: a server that says it is busy, loading or queueing, or
// asks to come back later, in plain words and in the languages agent
// users write in. Any fatal sign (accountEvidence or requestEvidence)
// vetoes these.
var weakRetryable = patterns(
	`\bbusy\b`, `\bcapacity\b`, `congest`, `\bqueue(?:d| (?:is )?full| position)\b`, `\bloading\b`, `warming up`, `cold start`,
	`temporar(?:y|ily)`, `try (?:it )?again`, `\bretry\b`, `\bretrying\b`, `\blater\b`, `please wait`, `rate.?limit`, `throttl`,
	// "too many" only of requests and the like: "too many tools / stop
	// sequences / images" is a request no wait fixes.
	`too many (?:\w+ )?(?:requests|calls|connections|queries|sessions|users|people|streams|attempts)\b`, `too frequent`, `slow down`, `upstream`, `gateway`, `\bdisconnect`, `\baborted\b`,
	`\b(?:request|rate|call|concurrency|concurrent)s? (?:limit )?(?:exceeded|reached)`, `\brate exceeded\b`,
	`\bno (?:models?|capacity|workers?|replicas?|instances?|slots?) (?:available|ready)\b`,
	// round 11 (tuning half): Cloudflare "No more data centers to forward
	// the request to"; no server, upstream or backend left to take it
	`\bno (?:more |healthy |available )?(?:data ?cent(?:er|re)s?|servers?|upstreams?|backends?|nodes?)\b[^.\n]{0,20}?\b(?:available|to forward|left|to route)`,
	`\bunable to (?:process|handle|serve) (?:your|the|this) request`, `could not (?:queue|schedule)`, `unable to queue`,
	`\b(?:high|large|heavy) (?:number|volume|load|amount) of (?:\w+ )?(?:requests|traffic|users)`, `\bheavy (?:load|traffic)\b`, `\bhigh (?:load|traffic)\b`,
	// Chinese 繁忙 (busy), 稍后/稍候 (later), 重试/再试 (retry), 限流
	// (throttled), 超时 (timeout), 频率/频繁 (frequency), 过载 (overload), 不可用
	// (unavailable), 拥挤/排队 (crowded, queued), 饱和 (saturated), 并发
	// (concurrency), 网络/连接 failures; Japanese 混雑, 混み合, しばらく, 後で,
	// 再試行, タイムアウト, 過負荷, 一時的, レート制限, 利用できません;
	// Korean 잠시 후, 다시 시도, 과부하, 시간 초과, 요청이 너무 많, 일시적;
	// Portuguese, Spanish, French, German, Russian, Italian.
	`繁忙|稍后|稍候|重试|再试|限流|超时|频率|频繁|过载|不可用|拥挤|排队|饱和|并发|网络错误|网络异常|连接(?:失败|超时|中断|错误|被重置)`,
	`混雑|混み合|しばらく|後でもう一度|後ほど|再度お試し|アクセスが集中|アクセス集中|時間を(?:おいて|置いて)|再試行|タイムアウト|過負荷|一時的|レート制限|利用できません|リクエストが多すぎ`,
	`잠시 후|다시 시도|과부하|시간 초과|요청이 너무 많|일시적`,
	`tente novamente|tentar novamente|mais tarde|intent[ae]lo de nuevo|m[aá]s tarde|demasiadas solicitudes|demasiadas peticiones|muitas solicita[cç][oõ]es|sobrecarregad|sobrecargad|tiempo de espera|tempo limite`,
	`r[ée]essay|plus tard|trop de requ[êe]tes|surcharg|zu viele anfragen|sp[äa]ter erneut|[üu]berlastet|zeit[üu]berschreitung`,
	`слишком много запросов|повторите|попробуйте (?:позже|снова|ещё)|перегружен|таймаут|превышен лимит запросов|riprova|troppe richieste|sovraccaric`,
)

// familyVerdict is the families' answer for a text no specific pattern
// matched, or false when the caller's fatal default stands: no verdict
// for a text with bannedEvidence; a usage limit by usageFamily; no
// verdict for a text with accountEvidence; a retryable failure by
// strongRetryable; and by weakRetryable only when
// the text has no requestEvidence either (an HTML body only without a 4xx
// status).
func familyVerdict(text string) (Classification, bool) {
	if p, ok := familyMatch(unpaidSuspension, text); ok {
		return Classification{Class: ClassUsageLimit, Pattern: "usage family: " + p}, true
	}
	if _, banned := firstMatch(bannedEvidence, text); banned {
		return Classification{}, false
	}
	if p, ok := familyMatch(usageFamily, text); ok {
		return Classification{Class: ClassUsageLimit, Pattern: "usage family: " + p}, true
	}
	if _, fatal := firstMatch(accountEvidence, text); fatal {
		return Classification{}, false
	}
	if p, ok := familyMatch(strongRetryable, text); ok {
		return Classification{Class: ClassRetryable, Pattern: "retryable family: " + p}, true
	}
	if p, ok := familyMatch(htmlBody, text); ok {
		if _, status := firstMatch(statusEvidence, text); !status {
			return Classification{Class: ClassRetryable, Pattern: "retryable family: " + p}, true
		}
	}
	if _, fatal := firstMatch(requestEvidence, text); fatal {
		return Classification{}, false
	}
	if p, ok := familyMatch(weakRetryable, text); ok {
		return Classification{Class: ClassRetryable, Pattern: "retryable family: " + p}, true
	}
	return Classification{}, false
}

// vetoes are the signs that the request, the key or the account is at
// fault, which veto a specific retryable wording (classifyError).
var vetoes = append(slices.Clip(bannedEvidence), accountEvidence...)

// maxFamilyQuote bounds the quoted words a family verdict names.
const maxFamilyQuote = 60

// familyMatch is firstMatch for the families, naming the words of the
// text that matched rather than the pattern: a family's pattern is a long
// alternation ("busy" in eight languages), and "why did this retry?" is
// answered by the words the error used. The quote is at most
// maxFamilyQuote bytes, cut on a UTF-8 boundary.
func familyMatch(ps []textPattern, text string) (string, bool) {
	for _, p := range ps {
		if loc := p.re.FindStringIndex(text); loc != nil {
			end := min(loc[1], loc[0]+maxFamilyQuote)
			for end > loc[0] && end < len(text) && !utf8.RuneStart(text[end]) {
				end--
			}
			return strconv.Quote(text[loc[0]:end]), true
		}
	}
	return "", false
}
