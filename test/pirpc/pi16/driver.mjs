// Drives `starter rpc` with pi 1.6.0's own RpcClient
// (@earendil-works/pi-coding-agent 1.6.0, under Node 22 from the npm
// package node@22) through the calls whose contract moved in pi 1.6:
// promptAndWait/waitForIdle (agent_settled), dispositions, steer and
// follow_up while idle, clear_queue, abort then prompt, the thinking
// levels, bash's bash_execution_update and excludeFromContext, and the usage
// so far on message_update (streaming usage, priced). Run by pirpc_test.go
// with PIRPC_CONFIG as for driver.mjs.
import assert from "node:assert/strict";
import { RpcClient } from "@earendil-works/pi-coding-agent";

const cfg = JSON.parse(process.env.PIRPC_CONFIG);
const clients = [];
let step = "start";

async function client(session, extra = []) {
	const c = new RpcClient({
		cliPath: cfg.shim,
		cwd: cfg.workspace,
		env: { STARTER: cfg.starter, PIRPC_STARTER: "1" },
		args: ["--session", session, ...cfg.args, ...extra],
	});
	await c.start();
	clients.push(c);
	return c;
}

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

const only = (evs, type, pred = () => true) => evs.filter((e) => e.type === type && pred(e));
const textOf = (m) => m.content.filter((b) => b.type === "text").map((b) => b.text).join("");
const users = (evs) => only(evs, "message_end", (e) => e.message.role === "user").map((e) => textOf(e.message));

// A long answer, so the scripted model streams it over several reads of
// its live output (message_update).
// A 1x1 PNG.
const image = { type: "image", data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==", mimeType: "image/png" };

const answerText = "done after a retry: " + Array.from({ length: 30 }, (_, i) => `word${i}`).join(" ") + ".";

async function main() {
	step = "promptAndWait through a retry";
	const a = await client("pi16-a", [
		"--scripted.faults", `tool:bash {"command":"echo hi"};503 Service Unavailable;text:${answerText}`,
		"--retry.baseDelayMs", "300", "--compaction.keepRecentTokens", "40",
	]);
	const evs = await a.promptAndWait("hello", undefined, 45000);
	const toolEnd = only(evs, "tool_execution_end")[0];
	assert.equal(typeof toolEnd.durationMs, "number");
	assert.ok(toolEnd.durationMs >= 0);
	assert.deepEqual(evs.slice(-2).map((e) => e.type), ["prompt_end", "agent_settled"]);
	assert.equal(evs.at(-1).aborted, false);
	assert.equal(only(evs, "auto_retry_start").length, 1, "agent_settled came after the retry, not at the first agent_end");
	assert.equal(await a.getLastAssistantText(), answerText);

	step = "message_update in pi 1.6's shape";
	const framed = only(evs, "message_update");
	assert.ok(framed.length > 0, "the streamed answers give message_update events");
	const open = new Map(); // entryId/attempt -> {index, type, text}
	const ended = [];
	const answers = new Map(); // entryId -> "started" | the done or error event
	for (const u of framed) {
		const ev = u.assistantMessageEvent;
		assert.equal(u.message, undefined, "a pi 1.6 update carries deltas only");
		assert.equal(typeof u.usage?.output, "number", "a pi 1.6 update carries the usage so far");
		if (ev.type === "start") {
			assert.equal(answers.get(u.entryId), undefined, `a second start of ${u.entryId}`);
			answers.set(u.entryId, "started");
			continue;
		}
		if (ev.type === "done" || ev.type === "error") {
			assert.equal(answers.get(u.entryId), "started", `${ev.type} of ${u.entryId} without its start`);
			for (const [key] of open) assert.ok(!key.startsWith(`${u.entryId}/`), `${ev.type} while a block of ${u.entryId} is open`);
			answers.set(u.entryId, ev);
			continue;
		}
		assert.equal(answers.get(u.entryId), "started", `${ev.type} of ${u.entryId} outside its start..done`);
		const key = `${u.entryId}/${ev.attempt}`;
		const [kind, phase] = ev.type.split("_");
		const cur = open.get(key);
		if (phase === "start") {
			assert.equal(cur, undefined, `${ev.type} while block ${cur?.index} is open`);
			open.set(key, { index: ev.contentIndex, kind, text: "", id: ev.id, toolName: ev.toolName });
			if (kind === "toolcall") assert.ok(ev.id && ev.toolName, "toolcall_start names the call");
			continue;
		}
		assert.ok(cur && cur.index === ev.contentIndex && cur.kind === kind, `${ev.type} at ${ev.contentIndex} outside its block`);
		if (phase === "delta") {
			cur.text += ev.delta;
			continue;
		}
		if (kind === "toolcall") {
			assert.equal(ev.toolCall.id, cur.id);
			assert.deepEqual(ev.toolCall.arguments, JSON.parse(cur.text));
		} else {
			assert.equal(ev.content, cur.text, `${ev.type} carries the block's deltas`);
		}
		open.delete(key);
		ended.push({ ...cur, ev });
	}
	assert.equal(open.size, 0, "every block that started ended");
	// A tool call is streamed when a read catches it running (a short one
	// may come whole with its message_end).
	for (const call of ended.filter((b) => b.kind === "toolcall")) {
		assert.equal(call.id, toolEnd.toolCallId);
		assert.equal(call.toolName, "bash");
	}
	assert.equal(ended.filter((b) => b.kind === "text").at(-1).ev.content, answerText, "text_end carries the whole answer");
	// Each answer is framed by start and done (or error, for the 503),
	// whose message is the one its message_end carries.
	const ends = only(evs, "message_end", (e) => e.message.role === "assistant");
	assert.equal(answers.size, ends.length, "every answer has its start");
	for (const end of ends) {
		const out = answers.get(end.entryId);
		const failed = end.message.stopReason === "error";
		assert.equal(out?.type, failed ? "error" : "done", `the outcome of ${end.entryId} (${end.message.stopReason})`);
		assert.equal(out.reason, end.message.stopReason);
		assert.deepEqual(failed ? out.error : out.message, end.message, "done/error carry the final message");
	}
	assert.deepEqual([...answers.values()].map((a) => a.reason), ["toolUse", "error", "stop"], "the tool call, the 503, the answer");

	step = "prompt() is started; waitForIdle()";
	const idle = a.waitForIdle(45000);
	assert.equal(await a.prompt("again"), "started");
	await idle;
	assert.equal((await a.getState()).isStreaming, false);

	step = "steer and followUp while idle queue; clearQueue";
	const updates = [];
	const offQ = a.onEvent((e) => e.type === "queue_update" && updates.push({ steering: e.steering, followUp: e.followUp }));
	assert.equal(await a.followUp("later"), "queued");
	assert.equal(await a.steer("sooner"), "queued");
	assert.equal((await a.getState()).pendingMessageCount, 2);
	assert.deepEqual(await a.clearQueue(), { steering: ["sooner"], followUp: ["later"] });
	assert.equal((await a.getState()).pendingMessageCount, 0);
	offQ();
	assert.deepEqual(updates, [
		{ steering: [], followUp: ["later"] },
		{ steering: ["sooner"], followUp: ["later"] },
		{ steering: [], followUp: [] },
	]);

	step = "messages queued while idle reach the next prompt";
	assert.equal(await a.steer("use short words"), "queued");
	assert.equal(await a.followUp("then say bye"), "queued");
	const evs2 = await a.promptAndWait("third", undefined, 45000);
	assert.deepEqual(users(evs2), ["third", "use short words", "then say bye"]);
	assert.equal(only(evs2, "prompt_end")[0].status, "completed");

	step = "compact: compaction_start/compaction_end, reason manual";
	const compEvents = [];
	const offC = a.onEvent((e) => e.type.startsWith("compaction_") && compEvents.push(e));
	const comp = await a.compact();
	offC();
	assert.ok(comp.summary.length > 0);
	assert.deepEqual(compEvents.map((e) => [e.type, e.reason]), [["compaction_start", "manual"], ["compaction_end", "manual"]]);
	assert.equal(compEvents[1].result.summary, comp.summary);
	assert.equal(compEvents[1].aborted, false);
	assert.equal(compEvents[1].willRetry, false);

	step = "getEntries (since) and getTree";
	const all = await a.getEntries();
	assert.ok(all.entries.length > 3);
	assert.ok(all.entries.some((e) => e.id === all.leafId));
	assert.ok(all.entries.some((e) => e.type === "compaction"));
	const later = await a.getEntries(all.entries.at(-2).id);
	assert.deepEqual(later.entries.map((e) => e.id), [all.entries.at(-1).id]);
	await assert.rejects(a.getEntries("no-such-entry"), /Entry not found: no-such-entry/);
	const tr = await a.getTree();
	assert.equal(tr.leafId, all.leafId);
	assert.equal(tr.tree.length, 1);
	assert.equal(tr.tree[0].entry.id, all.entries[0].id);

	step = "getSessionStats contextUsage";
	const stats = await a.getSessionStats();
	assert.equal(stats.contextUsage.contextWindow, 200000);

	step = "getAvailableThinkingLevels";
	const levels = await a.getAvailableThinkingLevels();
	assert.deepEqual(levels, ["off", "minimal", "low", "medium", "high", "xhigh", "max"]);
	let changed;
	a.onEvent((e) => e.type === "thinking_level_changed" && (changed = e.level));
	await a.setThinkingLevel(levels.at(-1));
	assert.equal(changed, levels.at(-1), "thinking_level_changed came before the response");
	assert.equal((await a.getState()).thinkingLevel, levels.at(-1));
	// cycleThinkingLevel walks every available level, xhigh and max too.
	const cycled = [];
	for (const _ of levels) cycled.push((await a.cycleThinkingLevel()).level);
	assert.deepEqual(cycled, levels, "cycle_thinking_level from max goes through every available level");

	step = "bash streams bash_execution_update";
	const chunks = [];
	const offBash = a.onEvent((e) => e.type === "bash_execution_update" && chunks.push(e));
	const br = await a.bash("for i in 1 2 3 4 5; do echo line$i; sleep 0.5; done");
	offBash();
	assert.equal(br.output, "line1\nline2\nline3\nline4\nline5");
	assert.ok(chunks.length > 1, `the running command's output came in updates (${chunks.length})`);
	assert.ok(chunks.every((e) => typeof e.id === "string" && e.id !== ""), "each update names the bash command's id");
	const streamedOut = chunks.map((e) => e.delta).join("");
	assert.ok(streamedOut.startsWith("line1\n") && (br.output + "\n").startsWith(streamedOut), `streamed ${JSON.stringify(streamedOut)}`);

	step = "bash of a short command: bash_execution_update before the response";
	const short = [];
	const offShort = a.onEvent((e) => e.type === "bash_execution_update" && short.push(e.delta));
	const hi = await a.bash("echo hi");
	offShort();
	assert.equal(hi.output, "hi");
	assert.ok(short.length > 0 && short.join("").startsWith("hi"), `updates before the response: ${JSON.stringify(short)}`);

	step = "bash excludeFromContext";
	const hidden = await a.send({ type: "bash", command: "echo kept from the model", excludeFromContext: true });
	assert.equal(hidden.success, true, hidden.error);
	assert.equal(hidden.data.output, "kept from the model");
	const last = (await a.getMessages()).at(-1);
	assert.deepEqual([last.role, last.output, last.excludeFromContext], ["bashExecution", "kept from the model", true]);
	await a.stop();

	step = "steer and followUp while running; abort, then prompt at once";
	const c = await client("pi16-c", ["--scripted.faults", "hang:20s"]);
	const answering = waitFor(c, (e) => e.type === "message_start" && e.message.role === "assistant", "the answer's message_start");
	assert.equal(await c.prompt("a long job"), "started");
	await answering;
	const queued = [];
	c.onEvent((e) => e.type === "queue_update" && queued.push({ steering: e.steering, followUp: e.followUp }));
	assert.equal(await c.steer("also this"), "queued");
	assert.equal(await c.followUp("then that"), "queued");
	assert.equal(await c.prompt("and this", undefined, "followUp"), "queued");
	assert.equal(await c.steer("look at this", [image]), "queued");
	await assert.rejects(c.prompt("not queued"), /session busy/);
	// Each queue_update came before its command's response.
	assert.deepEqual(queued, [
		{ steering: ["also this"], followUp: [] },
		{ steering: ["also this"], followUp: ["then that"] },
		{ steering: ["also this"], followUp: ["then that", "and this"] },
		{ steering: ["also this", "look at this"], followUp: ["then that", "and this"] },
	]);
	assert.deepEqual(await c.clearQueue(), { steering: ["also this", "look at this"], followUp: ["then that", "and this"] });
	assert.deepEqual(queued.at(-1), { steering: [], followUp: [] });
	let settled;
	c.onEvent((e) => e.type === "agent_settled" && (settled = e));
	const began = Date.now();
	await c.abort();
	assert.ok(Date.now() - began < 15000, "abort did not wait for the hang");
	// Lines are handled in order: the event was read before the response.
	assert.equal(settled?.aborted, true, "agent_settled (aborted) came before abort's response");
	const next = c.waitForIdle(45000);
	assert.equal(await c.prompt("next job"), "started");
	await next;
	await c.stop();

	step = "a steer with an image reaches the model";
	const d = await client("pi16-d", ["--scripted.faults", `tool:bash {"command":"sleep 2"};text:seen it`]);
	const running = waitFor(d, (e) => e.type === "tool_execution_start", "the bash call's start");
	const evsD = d.collectEvents(45000);
	assert.equal(await d.prompt("run something"), "started");
	await running;
	assert.equal(await d.steer("what is in this picture", [image]), "queued");
	const steered = only(await evsD, "message_end", (e) => e.message.role === "user" && textOf(e.message) === "what is in this picture");
	assert.equal(steered.length, 1);
	assert.deepEqual(steered[0].message.content.filter((b) => b.type === "image"), [image]);
	const ctxD = (await d.getMessages()).filter((m) => m.role === "user").at(-1);
	assert.deepEqual(ctxD.content.filter((b) => b.type === "image"), [image], "the session (the model's context) holds the image");
	await d.stop();

	step = "streaming usage: message_update carries the usage the model reported mid-stream";
	// The scripted model's usage: element reports input and cache counts
	// before the first word (as Anthropic's message_start) and the whole
	// usage after the last; the model is priced, so is the usage.
	const price = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
	const reported = { input: 1200, cacheRead: 800, cacheWrite: 50, output: 500 };
	const u = await client("pi16-u", [
		"--scripted.faults", `usage:${JSON.stringify(reported)} text:${answerText}`,
		"--model.prices", `scripted/scripted-1=${price.input},${price.output},${price.cacheRead},${price.cacheWrite}`,
	]);
	const evsU = await u.promptAndWait("how much did that cost", undefined, 45000);
	const endU = only(evsU, "message_end", (e) => e.message.role === "assistant");
	assert.equal(endU.length, 1);
	const finalU = endU[0].message.usage;
	const priced = (x) => {
		const per = (n, p) => Math.round(n * p / 1e6 * 1e8) / 1e8;
		const cost = { input: per(x.input, price.input), output: per(x.output, price.output), cacheRead: per(x.cacheRead, price.cacheRead), cacheWrite: per(x.cacheWrite, price.cacheWrite) };
		cost.total = Math.round((cost.input + cost.output + cost.cacheRead + cost.cacheWrite) * 1e8) / 1e8;
		return { ...x, totalTokens: x.input + x.output + x.cacheRead + x.cacheWrite, cost };
	};
	assert.deepEqual(finalU, priced(reported), "message_end's usage is the final report, priced");
	const updatesU = only(evsU, "message_update", (e) => e.entryId === endU[0].entryId);
	const deltasU = updatesU.filter((e) => e.assistantMessageEvent.type === "text_delta");
	assert.ok(deltasU.length > 1, `the answer streamed (${deltasU.length} text_delta)`);
	for (const e of deltasU) {
		const { input, cacheRead, cacheWrite, output } = e.usage;
		assert.deepEqual({ input, cacheRead, cacheWrite }, { input: 1200, cacheRead: 800, cacheWrite: 50 }, "each update carries the reported input and cache counts");
		assert.ok(output > 0 && output <= reported.output, `output so far ${output}`);
		assert.deepEqual(e.usage, priced({ input, cacheRead, cacheWrite, output }), "the usage so far is priced at the model's prices");
	}
	const mid = deltasU.filter((e) => e.usage.output < reported.output);
	assert.ok(mid.length > 0, "an update before message_end carries the usage so far, before the final output count");
	const outs = deltasU.map((e) => e.usage.output);
	assert.deepEqual(outs, [...outs].sort((x, y) => x - y), "output so far never goes down");
	const doneU = updatesU.find((e) => e.assistantMessageEvent.type === "done");
	assert.deepEqual(doneU.usage, finalU, "done carries the final usage");
	assert.ok(evsU.indexOf(mid[0]) < evsU.indexOf(endU[0]));
	const statsU = await u.getSessionStats();
	assert.equal(statsU.cost, finalU.cost.total, "the session's cost is the final usage's");
	console.log("ok: pi 1.6 RpcClient against starter rpc");
}

try {
	await main();
} catch (err) {
	console.error(`FAIL at step "${step}": ${err.stack ?? err}`);
	process.exitCode = 1;
} finally {
	await Promise.allSettled(clients.map((c) => c.stop()));
}
