// Drives `starter rpc` with the terminal agent's own RpcClient
// (@mariozechner/pi-coding-agent 0.73.1) through every command it sends,
// asserting what each returns, then loads a session file the agent wrote
// with the package's own SessionManager. Run by pirpc_test.go, which
// starts Temporal and a worker and passes PIRPC_CONFIG:
// {starter, shim, workspace, sessionsDir, args: [settings flags]}.
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RpcClient, SessionManager } from "@mariozechner/pi-coding-agent";

const cfg = JSON.parse(process.env.PIRPC_CONFIG);
const clients = [];
let step = "start";

// client starts `starter rpc` through the one-line shim, exactly as
// RpcClient starts the terminal agent: node <cliPath> --mode rpc ...
async function client(session, extra = [], opts = {}) {
	const c = new RpcClient({
		cliPath: cfg.shim,
		cwd: cfg.workspace,
		env: { STARTER: cfg.starter, PIRPC_STARTER: "1" },
		// pi 0.73's message_update carries the answer so far (message),
		// which this driver reads; starter rpc sends it when asked.
		args: ["--session", session, "--protocol", "0.73", ...cfg.args, ...extra],
		...opts,
	});
	await c.start();
	clients.push(c);
	return c;
}

// collect gathers events until prompt_end (ours); the terminal agent's
// own waitForIdle stops at the first agent_end, which a retry repeats.
function collect(c, timeout = 45000) {
	return new Promise((resolve, reject) => {
		const events = [];
		const timer = setTimeout(() => {
			off();
			reject(new Error(`no prompt_end within ${timeout} ms; got ${events.map((e) => e.type).join(" ")}`));
		}, timeout);
		const off = c.onEvent((e) => {
			events.push(e);
			if (e.type === "prompt_end") {
				clearTimeout(timer);
				off();
				resolve(events);
			}
		});
	});
}

// waitFor resolves with the first event that matches.
function waitFor(c, pred, what, timeout = 30000) {
	return new Promise((resolve, reject) => {
		const timer = setTimeout(() => {
			off();
			reject(new Error(`no ${what} within ${timeout} ms`));
		}, timeout);
		const off = c.onEvent((e) => {
			if (pred(e)) {
				clearTimeout(timer);
				off();
				resolve(e);
			}
		});
	});
}

// raw sends a command RpcClient has no method for (its send is the one
// every method uses) and returns the response.
async function raw(c, command) {
	return c.send(command);
}

const types = (evs) => evs.filter((e) => e.type !== "message_update" && e.type !== "tool_execution_update").map((e) => e.type);
const roles = (msgs) => msgs.map((m) => m.role);
const only = (evs, type, pred = () => true) => evs.filter((e) => e.type === type && pred(e));
const textOf = (m) => m.content.filter((b) => b.type === "text").map((b) => b.text).join("");
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const answerText = "The tool ran and the retry worked: " + Array.from({ length: 30 }, (_, i) => `word${i}`).join(" ") + ".";

async function main() {
	// ---- Client A: a prompt with a tool call and a retry --------------
	step = "A start";
	const a = await client("pi-a", [
		"--scripted.faults", `tool:bash {"command":"echo hi from the tool"};503 Service Unavailable;text:${answerText}`,
		"--retry.baseDelayMs", "300",
		"--model.available", "scripted/scripted-2",
		"--model.prices", "scripted/scripted-1=3,15,0.3,3.75",
		"--compaction.keepRecentTokens", "40",
	], { provider: "scripted", model: "scripted-1" });

	step = "get_state (new session)";
	let st = await a.getState();
	assert.equal(st.sessionId, "pi-a");
	assert.deepEqual(
		{ id: st.model.id, name: st.model.name, provider: st.model.provider, api: st.model.api, contextWindow: st.model.contextWindow, cost: st.model.cost },
		{ id: "scripted-1", name: "scripted-1", provider: "scripted", api: "scripted", contextWindow: 200000, cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } });
	assert.deepEqual(st.model.input, ["text", "image"]);
	assert.equal(st.thinkingLevel, "off");
	assert.equal(st.isStreaming, false);
	assert.equal(st.isCompacting, false);
	assert.equal(st.steeringMode, "one-at-a-time");
	assert.equal(st.followUpMode, "one-at-a-time");
	assert.equal(st.sessionFile, join(cfg.sessionsDir, "pi-a.jsonl"));
	assert.equal(st.sessionName, undefined);
	assert.equal(st.autoCompactionEnabled, true);
	assert.equal(st.messageCount, 0);
	assert.equal(st.pendingMessageCount, 0);
	assert.equal(st.autoRetryEnabled, true); // ours
	assert.equal(st.isRetrying, false); // ours

	step = "prompt: tool call, retry, streamed answer";
	const done = collect(a);
	await a.prompt("run the tool");
	const evs = await done;
	if (process.env.PIRPC_DEBUG) for (const e of evs) console.log(JSON.stringify(e));
	assert.deepEqual(types(evs), [
		"agent_start", "turn_start", "message_start", "message_end", // the user message
		"message_start", "message_end", // the answer with the tool call
		"tool_execution_start", "tool_execution_end", "message_start", "message_end", "turn_end",
		"turn_start", "message_start", "message_end", "turn_end", "agent_end", // the 503
		"auto_retry_start",
		"agent_start", "turn_start", "message_start", "message_end", "turn_end", "agent_end",
		"auto_retry_end", "prompt_end",
	]);
	for (const e of evs) {
		assert.equal(typeof e.seq, "number", `${e.type} has seq`); // ours
		assert.equal(typeof e.time, "string", `${e.type} has time`); // ours
	}
	const ends = only(evs, "message_end");
	const [user, call, result, failed, answer] = ends.map((e) => e.message);
	assert.deepEqual(roles([user, call, result, failed, answer]), ["user", "assistant", "toolResult", "assistant", "assistant"]);
	assert.deepEqual(user.content, [{ type: "text", text: "run the tool" }]);
	assert.equal(typeof user.timestamp, "number");
	const tc = call.content.find((b) => b.type === "toolCall");
	assert.equal(typeof tc.id, "string");
	assert.deepEqual({ type: tc.type, name: tc.name, arguments: tc.arguments }, { type: "toolCall", name: "bash", arguments: { command: "echo hi from the tool" } });
	assert.equal(tc.toolCall, undefined, "flat toolCall block");
	assert.equal(call.api, "scripted");
	assert.equal(call.provider, "scripted");
	assert.equal(call.model, "scripted-1");
	assert.equal(call.stopReason, "toolUse");
	assert.equal(typeof call.timestamp, "number");
	assert.equal(call.usage.totalTokens, call.usage.input + call.usage.output + call.usage.cacheRead + call.usage.cacheWrite);
	assert.ok(call.usage.cost.total > 0, "usage.cost from model.prices");
	assert.equal(call.usage.cost.total, Math.round((call.usage.cost.input + call.usage.cost.output + call.usage.cost.cacheRead + call.usage.cost.cacheWrite) * 1e8) / 1e8);
	const ts = only(evs, "tool_execution_start")[0];
	assert.deepEqual({ toolCallId: ts.toolCallId, toolName: ts.toolName, args: ts.args }, { toolCallId: tc.id, toolName: "bash", args: { command: "echo hi from the tool" } });
	const te = only(evs, "tool_execution_end")[0];
	assert.equal(te.toolCallId, tc.id);
	assert.equal(te.isError, false);
	assert.deepEqual(te.result.content, [{ type: "text", text: "hi from the tool" }]);
	assert.deepEqual({ role: result.role, toolCallId: result.toolCallId, toolName: result.toolName, isError: result.isError, content: result.content },
		{ role: "toolResult", toolCallId: tc.id, toolName: "bash", isError: false, content: [{ type: "text", text: "hi from the tool" }] });
	assert.equal(typeof result.timestamp, "number");
	const turn1 = only(evs, "turn_end")[0];
	assert.equal(turn1.message.content.find((b) => b.type === "toolCall").id, tc.id);
	assert.deepEqual(turn1.toolResults.map((m) => [m.role, m.toolCallId, textOf(m)]), [["toolResult", tc.id, "hi from the tool"]]);
	assert.equal(failed.stopReason, "error");
	assert.equal(failed.errorMessage, "503 Service Unavailable");
	assert.deepEqual(failed.content, []);
	assert.deepEqual(failed.usage, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
	const agentEnds = only(evs, "agent_end");
	assert.equal(agentEnds[0].willRetry, true); // ours
	assert.deepEqual(roles(agentEnds[0].messages), ["user", "assistant", "toolResult", "assistant"]);
	assert.equal(agentEnds[0].messages[3].stopReason, "error");
	assert.equal(agentEnds[1].willRetry, false);
	assert.deepEqual(agentEnds[1].messages.map(textOf), [answerText]);
	const retry = only(evs, "auto_retry_start")[0];
	assert.deepEqual({ attempt: retry.attempt, maxAttempts: retry.maxAttempts, errorMessage: retry.errorMessage },
		{ attempt: 1, maxAttempts: 3, errorMessage: "503 Service Unavailable" });
	assert.equal(typeof retry.delayMs, "number");
	const rend = only(evs, "auto_retry_end")[0];
	assert.deepEqual({ success: rend.success, attempt: rend.attempt }, { success: true, attempt: 1 });
	assert.equal(textOf(answer), answerText);
	assert.equal(answer.stopReason, "stop");
	assert.deepEqual(only(evs, "prompt_end")[0].status, "completed"); // ours
	// message_update: the terminal agent's assistantMessageEvent (block
	// frames and deltas) and, asked with --protocol 0.73, the partial
	// message the deltas built.
	const framed = only(evs, "message_update");
	assert.ok(framed.length > 0, "the streamed answer gives message_update events");
	const frameKinds = ["text", "thinking", "toolcall"].flatMap((k) => [`${k}_start`, `${k}_delta`, `${k}_end`]);
	for (const u of framed) {
		assert.equal(u.message.role, "assistant");
		assert.ok(frameKinds.includes(u.assistantMessageEvent.type), u.assistantMessageEvent.type);
		assert.equal(typeof u.assistantMessageEvent.contentIndex, "number");
	}
	const updates = framed.filter((u) => u.assistantMessageEvent.type.endsWith("_delta"));
	for (const u of updates) assert.equal(typeof u.assistantMessageEvent.delta, "string");
	const lastText = updates.filter((u) => u.assistantMessageEvent.type === "text_delta").at(-1);
	assert.ok(answerText.startsWith(textOf(lastText.message)), "the partial message is a prefix of the answer");

	step = "get_messages";
	let msgs = await a.getMessages();
	assert.deepEqual(roles(msgs), ["user", "assistant", "toolResult", "assistant"]);
	assert.deepEqual(msgs[1].content.find((b) => b.type === "toolCall").arguments, { command: "echo hi from the tool" });
	assert.equal(textOf(msgs[3]), answerText);

	step = "get_last_assistant_text";
	assert.equal(await a.getLastAssistantText(), answerText);

	step = "get_session_stats";
	let stats = await a.getSessionStats();
	assert.equal(stats.sessionId, "pi-a");
	assert.equal(stats.sessionFile, st.sessionFile);
	assert.deepEqual([stats.userMessages, stats.assistantMessages, stats.toolCalls, stats.toolResults, stats.totalMessages], [1, 2, 1, 1, 4]);
	assert.equal(stats.tokens.total, stats.tokens.input + stats.tokens.output + stats.tokens.cacheRead + stats.tokens.cacheWrite);
	assert.ok(stats.tokens.total > 0 && stats.cost > 0);
	assert.equal(stats.contextUsage.contextWindow, 200000);
	assert.ok(stats.contextUsage.tokens > 0 && stats.contextUsage.percent > 0);

	step = "bash";
	let br = await a.bash("echo from the user; exit 3");
	assert.deepEqual(br, { output: "from the user", exitCode: 3, cancelled: false, truncated: false });
	msgs = await a.getMessages();
	const bx = msgs.at(-1);
	assert.deepEqual({ role: bx.role, command: bx.command, output: bx.output, exitCode: bx.exitCode, cancelled: bx.cancelled, truncated: bx.truncated },
		{ role: "bashExecution", command: "echo from the user; exit 3", output: "from the user", exitCode: 3, cancelled: false, truncated: false });

	step = "abort_bash";
	const started = Date.now();
	const pending = a.bash("echo started; sleep 25; echo never");
	await new Promise((r) => setTimeout(r, 1500));
	await a.abortBash();
	br = await pending;
	assert.equal(br.cancelled, true);
	assert.equal(br.exitCode, null);
	assert.ok(Date.now() - started < 20000, "abort_bash stopped the command");
	await a.abortBash(); // nothing runs: a no-op

	step = "set_session_name";
	await a.setSessionName("pi test");
	assert.equal((await a.getState()).sessionName, "pi test");
	// RpcClient.setSessionName does not read the response: raw shows it.
	const blank = await raw(a, { type: "set_session_name", name: "   " });
	assert.deepEqual([blank.success, blank.error], [false, "Session name cannot be empty"]);

	step = "get_fork_messages";
	const forks = await a.getForkMessages();
	assert.deepEqual(forks.map((f) => f.text), ["run the tool"]);
	assert.equal(typeof forks[0].entryId, "string");

	step = "get_available_models";
	const models = await a.getAvailableModels();
	assert.deepEqual(models.map((m) => `${m.provider}/${m.id}`), ["scripted/scripted-1", "scripted/scripted-2"]);
	assert.deepEqual(models[1].cost, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });

	step = "set_model";
	const m2 = await a.setModel("scripted", "scripted-2");
	assert.equal(m2.id, "scripted-2");
	assert.equal((await a.getState()).model.id, "scripted-2");
	await assert.rejects(a.setModel("openai", "gpt-nope"), /^Error: Model not found: openai\/gpt-nope/);

	step = "cycle_model";
	const cyc = await a.cycleModel();
	assert.equal(cyc.model.id, "scripted-1");
	assert.equal(cyc.isScoped, false);
	assert.equal(cyc.thinkingLevel, "off");

	step = "set_thinking_level / cycle_thinking_level";
	await a.setThinkingLevel("high");
	assert.equal((await a.getState()).thinkingLevel, "high");
	// Every level the model takes, xhigh and max included (issue 24).
	assert.deepEqual(await a.cycleThinkingLevel(), { level: "xhigh" });
	assert.deepEqual(await a.cycleThinkingLevel(), { level: "max" });
	assert.deepEqual(await a.cycleThinkingLevel(), { level: "off" });
	await a.setThinkingLevel("medium");
	assert.equal((await a.getState()).thinkingLevel, "medium");

	step = "set_steering_mode / set_follow_up_mode";
	await a.setSteeringMode("all");
	await a.setFollowUpMode("all");
	st = await a.getState();
	assert.deepEqual([st.steeringMode, st.followUpMode], ["all", "all"]);

	step = "set_auto_compaction / set_auto_retry";
	await a.setAutoCompaction(false);
	await a.setAutoRetry(false);
	st = await a.getState();
	assert.deepEqual([st.autoCompactionEnabled, st.autoRetryEnabled], [false, false]);
	await a.setAutoCompaction(true);
	await a.setAutoRetry(true);
	st = await a.getState();
	assert.deepEqual([st.autoCompactionEnabled, st.autoRetryEnabled], [true, true]);

	step = "compact";
	const comp = await a.compact("keep the tool output");
	assert.equal(typeof comp.summary, "string");
	assert.ok(comp.summary.length > 0);
	assert.equal(typeof comp.firstKeptEntryId, "string");
	assert.ok(comp.tokensBefore > 0);
	msgs = await a.getMessages();
	assert.equal(msgs[0].role, "compactionSummary");
	assert.equal(msgs[0].summary, comp.summary);
	assert.equal(msgs[0].tokensBefore, comp.tokensBefore);

	step = "get_commands / export_html / unknown command";
	assert.deepEqual(await a.getCommands(), []);
	await assert.rejects(a.exportHtml("/tmp/x.html"), /export_html is not supported/);
	const unk = await raw(a, { type: "reboot" });
	assert.deepEqual({ type: unk.type, command: unk.command, success: unk.success, error: unk.error },
		{ type: "response", command: "reboot", success: false, error: "Unknown command: reboot" });
	await a.stop();

	// ---- Client B: switch_session shows earlier messages; images ------
	step = "B start";
	const b = await client("pi-b", ["--model.available", "scripted/scripted-2"]);
	step = "compact with nothing to compact";
	await assert.rejects(b.compact(), /^Error: Nothing to compact \(session too small\)$/);

	step = "switch_session";
	assert.deepEqual(await b.switchSession(st.sessionFile), { cancelled: false });
	st = await b.getState();
	assert.deepEqual([st.sessionId, st.sessionName, st.thinkingLevel, st.model.id], ["pi-a", "pi test", "medium", "scripted-1"]);
	msgs = await b.getMessages();
	assert.equal(msgs[0].role, "compactionSummary", "the earlier conversation");
	assert.equal(msgs.at(-1).role, "bashExecution");
	await assert.rejects(b.switchSession(join(cfg.sessionsDir, "nope.jsonl")), /session "nope" not found/);
	await assert.rejects(b.switchSession("/etc/passwd.jsonl"), /is not a session file of/);

	step = "prompt with an image and the thinking level";
	const done2 = collect(b);
	await b.prompt("describe this", [{ type: "image", data: PNG, mimeType: "image/png" }]);
	const evs2 = await done2;
	const u2 = only(evs2, "message_end", (e) => e.message.role === "user")[0].message;
	assert.deepEqual(u2.content, [{ type: "text", text: "describe this" }, { type: "image", data: PNG, mimeType: "image/png" }]);
	const a2 = only(evs2, "message_end", (e) => e.message.role === "assistant")[0].message;
	assert.deepEqual(a2.content, [
		{ type: "thinking", thinking: "Thinking (medium) about: describe this" },
		{ type: "text", text: "Scripted reply to: describe this [image/png]" },
	]);

	step = "fork";
	const forks2 = await b.getForkMessages();
	assert.deepEqual(forks2.map((f) => f.text), ["run the tool", "describe this"]);
	const before = (await b.getMessages()).length - 2; // up to the "describe this" prompt
	const fk = await b.fork(forks2[1].entryId);
	assert.deepEqual(fk, { text: "describe this", cancelled: false });
	st = await b.getState();
	assert.notEqual(st.sessionId, "pi-a");
	assert.equal(st.messageCount, before);
	await assert.rejects(b.fork("no-such-entry"), /Invalid entry ID for forking/);

	step = "clone";
	const forkID = st.sessionId;
	assert.deepEqual(await b.clone(), { cancelled: false });
	st = await b.getState();
	assert.notEqual(st.sessionId, forkID);
	assert.equal(st.messageCount, before);

	step = "new_session";
	assert.deepEqual(await b.newSession(), { cancelled: false });
	st = await b.getState();
	assert.ok(st.sessionId !== forkID && st.sessionId !== "pi-a");
	assert.equal(st.messageCount, 0);
	assert.deepEqual(await b.getMessages(), []);
	assert.equal(await b.getLastAssistantText(), null);
	await b.stop();

	// ---- Client C: steer, follow_up, streamingBehavior, abort ----------
	step = "C steer and follow_up";
	const c = await client("pi-c", ["--scripted.faults", "hang:3s"]);
	const done3 = collect(c);
	const waiting = waitFor(c, (e) => e.type === "message_start" && e.message.role === "assistant", "the answer's message_start");
	await c.prompt("a long job");
	await waiting;
	await c.steer("also do this");
	await c.followUp("then that");
	const q = await raw(c, { type: "prompt", message: "and finally this", streamingBehavior: "followUp" });
	assert.equal(q.success, true);
	st = await c.getState();
	assert.equal(st.isStreaming, true);
	assert.equal(st.pendingMessageCount, 3);
	const busy = await raw(c, { type: "prompt", message: "not queued" });
	assert.equal(busy.success, false);
	assert.match(busy.error, /^session busy/);
	const evs3 = await done3;
	const users = only(evs3, "message_end", (e) => e.message.role === "user").map((e) => textOf(e.message));
	assert.deepEqual(users, ["a long job", "also do this", "then that", "and finally this"]);
	assert.equal(only(evs3, "prompt_end")[0].status, "completed");

	step = "C abort";
	const done4 = collect(c);
	const waiting2 = waitFor(c, (e) => e.type === "message_start" && e.message.role === "assistant", "the answer's message_start");
	await c.prompt("another long job");
	await waiting2;
	await c.abort();
	const evs4 = await done4;
	assert.equal(only(evs4, "agent_end").at(-1).stopReason, "aborted");
	assert.equal(only(evs4, "prompt_end")[0].status, "aborted");
	await c.stop();

	// ---- Client D: abort_retry during the backoff ----------------------
	step = "D abort_retry";
	const d = await client("pi-d", ["--scripted.faults", "503 Service Unavailable", "--retry.baseDelayMs", "60000"]);
	const done5 = collect(d);
	const backoff = waitFor(d, (e) => e.type === "auto_retry_start", "auto_retry_start");
	await d.prompt("hello");
	await backoff;
	st = await d.getState();
	assert.equal(st.isRetrying, true);
	assert.equal(st.pendingRetry.delayMs, 60000);
	await d.abortRetry();
	const evs5 = await done5;
	const re = only(evs5, "auto_retry_end")[0];
	assert.deepEqual({ success: re.success, attempt: re.attempt, finalError: re.finalError }, { success: false, attempt: 1, finalError: "Retry cancelled" });
	assert.equal(only(evs5, "prompt_end")[0].status, "failed");
	await d.stop();

	// ---- Client E: approve_tool (ours) ---------------------------------
	step = "E approve_tool";
	const e = await client("pi-e", ["--scripted.faults", `tool:bash {"command":"echo approved"}`, "--tools.requireApproval", "bash"]);
	const done6 = collect(e);
	const asked = waitFor(e, (ev) => ev.type === "tool_approval_request", "tool_approval_request");
	await e.prompt("run it if I say so");
	const req = await asked;
	assert.equal(req.toolName, "bash");
	assert.deepEqual(req.args, { command: "echo approved" });
	st = await e.getState();
	assert.deepEqual(st.pendingApprovals.map((p) => p.toolCallId), [req.toolCallId]);
	const ok = await raw(e, { type: "approve_tool", toolCallId: req.toolCallId, approved: true });
	assert.equal(ok.success, true);
	const again = await raw(e, { type: "approve_tool", toolCallId: req.toolCallId, approved: false, reason: "changed my mind" });
	assert.equal(again.success, false);
	const evs6 = await done6;
	assert.deepEqual(only(evs6, "tool_execution_end")[0].result.content, [{ type: "text", text: "approved" }]);
	await e.stop();

	// ---- The terminal agent's SessionManager reads our session file ----
	step = "SessionManager.open";
	const dir = mkdtempSync(join(tmpdir(), "pirpc-"));
	const copy = join(dir, "pi-a.jsonl");
	copyFileSync(join(cfg.sessionsDir, "pi-a.jsonl"), copy);
	const bytes = readFileSync(copy, "utf8");
	const sm = SessionManager.open(copy, dir);
	assert.equal(readFileSync(copy, "utf8"), bytes, "opened as is: no migration rewrote the file");
	assert.equal(sm.getSessionId(), "pi-a");
	assert.equal(sm.getCwd(), cfg.workspace);
	assert.equal(sm.getSessionName(), "pi test");
	const ctx = sm.buildSessionContext();
	const ours = await (async () => {
		const v = await client("pi-a");
		const m = await v.getMessages();
		await v.stop();
		return m;
	})();
	assert.deepEqual(roles(ctx.messages), roles(ours));
	assert.deepEqual(ctx.messages.map(textOfAny), ours.map(textOfAny));
	assert.equal(ctx.thinkingLevel, "medium");
	assert.deepEqual(ctx.model, { provider: "scripted", modelId: "scripted-1" });
	const kinds = new Set(sm.getEntries().map((x) => x.type));
	for (const k of ["message", "compaction", "model_change", "thinking_level_change", "session_info", "custom"]) {
		assert.ok(kinds.has(k), `the file has a ${k} entry`);
	}
	const header = sm.getHeader();
	assert.equal(header.version, 3);
	console.log("ok: every RpcClient method against starter rpc");
}

// textOfAny is a message's text whatever its role.
function textOfAny(m) {
	if (m.role === "compactionSummary") return m.summary;
	if (m.role === "bashExecution") return m.command + "\n" + m.output;
	return (m.content ?? []).map((b) => b.text ?? b.thinking ?? (b.type === "toolCall" ? JSON.stringify(b.arguments) : b.type)).join("|");
}

try {
	await main();
} catch (err) {
	console.error(`FAIL at step "${step}": ${err.stack ?? err}`);
	process.exitCode = 1;
} finally {
	await Promise.allSettled(clients.map((c) => c.stop()));
}
