import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import type { ModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { forkReasonWords } from '../../src/ui/agent-turns.js';
import { conversationText } from '../../src/ui/conversation-text.js';
import { LONG_OBSERVATION_CHARS } from '../../src/ui/pages/observations.js';
import { trajectoryPage } from '../../src/ui/pages/trajectory-page.js';
import { loadTrajectoryDetails } from '../../src/ui/trajectory-details.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';
import { SCREENSHOTS, startUiBrowser, type UiBrowser } from './ui-browser.js';

// Postgres alone (no Temporal): an agent program's turns as the worker stores them (modelled on the rows
// test/integration/agent-programs.test.ts stores), their replies and tool results hostile, beside a tool-environment turn.
let db: TestDatabase;
let tokenizer: ModelTokenizer;
let ui: UiBrowser;
let page: Page;

const AGENT = 'agent-ui/sample-1/0';
const LIMITED = 'agent-ui/sample-2/0';
const REWARDED = 'agent-ui/sample-3/0';
const RUNNING = 'agent-ui/sample-4/0';
const OTHER = 'env-ui/game/1/0';
const HOSTILE = '</pre><script>window.pwned = 1</script><b>not bold</b> & "quoted"';
const LONG_RESULT = Array.from({ length: 120 }, (_, i) => `row ${i}: ${'y'.repeat(30)}`).join('\n');
const ANSWER = 'So 3 · 45 + 2 · 60 = 255.\nTherefore, the final answer is $\\boxed{255}$ <img src=x onerror="window.pwned = 3">';

function reply(call: number, parts: Record<string, unknown>, finishReason = 'tool_calls') {
  return { call, finishReason, reply: { role: 'assistant', content: null, refusal: null, ...parts } };
}

async function storeTrajectory(id: string, environment: string, rawRewards: number[]): Promise<void> {
  await db.pool.query(
    `INSERT INTO trajectories (trajectory_id, qid, status, layout, num_turns, birth_time, rewards, raw_rewards, successes, seq_no_eos_mask, output_tokens, end_reason, environment)
     VALUES ($1, 'sample-1', 'completed', 'seed', $2, 0, $3, $3, $4, $5, 10, 'done', $6)`,
    [id, rawRewards.length, rawRewards, rawRewards.map((r) => r > 0), rawRewards.map(() => false), environment],
  );
}

async function storeTurn(id: string, turn: number, verdict: string, step: unknown, extracted: string | null = null, detail: string | null = null) {
  await db.pool.query(
    `INSERT INTO turn_texts (trajectory_id, turn, answer_text, extracted_answer, verdict, feedback_text, verdict_detail, environment_step)
     VALUES ($1, $2, $3, $4, $5, NULL, $6, $7)`,
    [id, turn, `<think>\nthinking ${turn}\n</think>\n\n<tool_call>raw ${turn}</tool_call>`, extracted, verdict, detail, JSON.stringify(step)],
  );
}

beforeAll(async () => {
  db = await startTestDatabase();
  tokenizer = await loadModelTokenizer();
  // Three calls: two tool calls (one's arguments not JSON) answered by tool results, a malformed call the program
  // answered after dropping the reasoning (a fork), then the answer, judged.
  await storeTrajectory(AGENT, 'py-calculator', [0, 0, 1]);
  await storeTurn(AGENT, 0, 'tool_calls', {
    observations: [
      { role: 'tool', content: HOSTILE, tool_call_id: 'call_0_0' },
      { role: 'tool', content: LONG_RESULT, tool_call_id: 'call_0_1' },
      { role: 'user', content: 'keep going' },
    ],
    reward: 0,
    success: false,
    done: false,
    info: reply(0, {
      reasoning_content: 'I need <the calculator>.',
      tool_calls: [
        { id: 'call_0_0', type: 'function', function: { name: 'calculator<script>', arguments: '{"expression":"3 * 45","note":"</pre><i>x</i>"}' } },
        { id: 'call_0_1', type: 'function', function: { name: 'unit_convert', arguments: '{"value": 1, oops' } },
      ],
    }),
  });
  await storeTurn(AGENT, 1, 'malformed_tool_call', {
    observations: [],
    reward: 0,
    success: false,
    done: false,
    info: {
      ...reply(
        1,
        {
          content: '<tool_call>\n{"name": "calc"}\n</tool_call>',
          reasoning_content: 'again',
          malformed_tool_calls: [
            { kind: 'unknown-tool', index: 0, observation: 'Error: there is no tool named "calc" <script>window.pwned = 2</script>' },
          ],
        },
        'stop',
      ),
      fork: { kind: 'dropped-reasoning', index: 2 },
    },
  });
  await storeTurn(
    AGENT,
    2,
    'correct',
    {
      observations: [],
      reward: 1,
      success: true,
      done: true,
      info: { ...reply(2, { content: ANSWER, reasoning_content: 'done' }, 'stop'), end: { kind: 'returned', answer: ANSWER } },
    },
    '255',
  );
  // Cut at the turn limit; and one that returned its own reward.
  await storeTrajectory(LIMITED, 'ts-calculator', [0]);
  await storeTurn(
    LIMITED,
    0,
    'turn_limit',
    {
      observations: [],
      reward: 0,
      success: false,
      done: true,
      info: { ...reply(0, { tool_calls: [] }), end: { kind: 'turn-limit', turns: 1 } },
    },
    null,
    "the program made a call past the trajectory's 1 turns: the episode was cut there",
  );
  await storeTrajectory(REWARDED, 'scorer', [0.5]);
  await storeTurn(REWARDED, 0, 'program_reward', {
    observations: [],
    reward: 0.5,
    success: true,
    done: true,
    info: { ...reply(0, { content: 'ok' }, 'stop'), end: { kind: 'returned', reward: 0.5, success: true } },
  });
  // A running one: its working row holds the step, a tool result with its id.
  await db.pool.query(`INSERT INTO trajectory_prompts (trajectory_id, prompt_ids, prompt_text) VALUES ($1, '\\x01000000', 'p')`, [RUNNING]);
  await db.pool.query(
    `INSERT INTO turn_outputs (trajectory_id, turn, attempt, context_len, output_ids, output_logprobs, finish_reason, version_start, version_end, verdict, feedback_text, environment_step)
     VALUES ($1, 0, 1, 1, '\\x0100000002000000', '\\x0000000000000000', 'stop', 0, 0, 'tool_calls', 'appended', $2)`,
    [
      RUNNING,
      JSON.stringify({
        observations: [{ role: 'tool', content: '42', tool_call_id: 'call_0_0' }],
        reward: 0,
        success: false,
        done: false,
        info: reply(0, { tool_calls: [{ id: 'call_0_0', type: 'function', function: { name: 'calculator', arguments: '{"expression":"6*7"}' } }] }),
      }),
    ],
  );
  // A tool environment's turn (not an agent's): shown as before, no agent parts.
  await storeTrajectory(OTHER, 'tool-game', [1]);
  await storeTurn(OTHER, 0, 'correct', { observations: [{ role: 'tool', content: 'result' }], reward: 1, done: true, info: { call: 0 } });
  ui = await startUiBrowser(db.pool);
  page = ui.page;
}, 60_000);

afterAll(async () => {
  await ui?.close();
  await db?.stop();
});

async function rendered(id: string): Promise<string> {
  return String(await trajectoryPage(await loadTrajectoryDetails(db.pool, tokenizer, undefined, id)));
}

describe('the trajectory page of an agent program (server-rendered)', () => {
  it('escapes everything the program and the model wrote', async () => {
    const html = await rendered(AGENT);
    expect(html).not.toContain('<script>window.pwned');
    expect(html).not.toContain('calculator<script>');
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('<i>x</i>');
    expect(html).not.toContain('<the calculator>');
    expect(html).toContain('&lt;/pre&gt;&lt;script&gt;window.pwned = 1&lt;/script&gt;');
    expect(html).toContain('calculator&lt;script&gt;');
  });

  it('renders a turn that is no agent call exactly as the observations section does', async () => {
    // The body only: the inline stylesheet names the agent parts' classes.
    const html = (await rendered(OTHER)).split('<main>')[1]!;
    expect(html).not.toContain('agent-call');
    expect(html).not.toContain('fork-marker');
    expect(html).toContain('<pre class="info">{&quot;call&quot;: 0}</pre>');
    expect(html).toContain('Observations for this verdict');
  });
});

const text = (selector: string) => page.$eval(selector, (el) => el.textContent ?? '');
const texts = (selector: string) => page.$$eval(selector, (els) => els.map((el) => el.textContent ?? ''));

describe('the trajectory page of an agent program (in chromium)', () => {
  it("shows each call: its index, the reply's reasoning folded, content, tool calls and malformed calls", async () => {
    await ui.open(`/trajectories/${encodeURIComponent(AGENT)}`, 'agent-turns');
    expect(await page.evaluate(() => (globalThis as any).pwned)).toBeUndefined();
    expect(await text('#environment')).toBe('py-calculator');
    expect(await texts('.call-index')).toEqual(['0', '1', '2']);
    expect((await text('section[data-turn="0"] .agent-call')).replace(/\s+/g, ' ')).toBe(
      "program call index 0 (the program's 1st model call) · finish reason tool_calls",
    );
    expect(await page.$eval('section[data-turn="0"] details.reply-reasoning', (el) => el.hasAttribute('open'))).toBe(false);
    expect(await text('section[data-turn="0"] details.reply-reasoning summary')).toBe('reasoning (reasoning_content, 24 characters)');
    expect(await text('section[data-turn="0"] details.reply-reasoning pre')).toBe('I need <the calculator>.');
    expect(await text('section[data-turn="0"] .reply-content-none')).toBe('content: none');
    expect(await texts('section[data-turn="0"] .tool-name')).toEqual(['calculator<script>', 'unit_convert']);
    expect(await texts('section[data-turn="0"] .tool-call .tool-call-id')).toEqual(['call_0_0', 'call_0_1']);
    // Arguments pretty-printed from their JSON string; arguments that are not JSON are shown as sent, flagged.
    expect(await texts('section[data-turn="0"] .tool-arguments')).toEqual([
      '{"expression": "3 * 45", "note": "</pre><i>x</i>"}',
      '{"value": 1, oops',
    ]);
    expect(await text('section[data-turn="0"] .tool-call:nth-child(2) .flag')).toBe('arguments are not JSON, shown as sent:');
    expect(await text('section[data-turn="1"] .reply-content')).toBe('<tool_call>\n{"name": "calc"}\n</tool_call>');
    expect(await text('section[data-turn="1"] .malformed-kind')).toBe('unknown-tool');
    expect(await text('section[data-turn="1"] .malformed-index')).toBe('0');
    expect(await text('section[data-turn="1"] .malformed-observation')).toBe(
      'Error: there is no tool named "calc" <script>window.pwned = 2</script>',
    );
    // The raw decoded text is kept, folded; the reply stands in for the answer.
    expect(await page.$eval('section[data-turn="0"] details.model-output', (el) => el.hasAttribute('open'))).toBe(false);
    expect(await text('section[data-turn="0"] details.model-output pre')).toBe('<tool_call>raw 0</tool_call>');
  });

  it('shows the messages the next call added, with role and tool_call_id, a long one folded', async () => {
    expect(await text('section[data-turn="0"] .feedback-label')).toBe("Messages the program's next call added (appended as tokens before turn 2):");
    const messages = await page.$$eval('section[data-turn="0"] .observation', (els) =>
      els.map((el) => ({
        tag: el.tagName.toLowerCase(),
        role: el.getAttribute('data-role'),
        id: el.querySelector('.tool-call-id')?.textContent ?? null,
        content: el.querySelector('pre')?.textContent,
        open: el.hasAttribute('open'),
      })),
    );
    expect(LONG_RESULT.length).toBeGreaterThan(LONG_OBSERVATION_CHARS);
    expect(messages).toEqual([
      { tag: 'div', role: 'tool', id: 'call_0_0', content: HOSTILE, open: false },
      { tag: 'details', role: 'tool', id: 'call_0_1', content: LONG_RESULT, open: false },
      { tag: 'div', role: 'user', id: null, content: 'keep going', open: false },
    ]);
    expect(await text('section[data-turn="0"] details.observation summary')).toContain(`${LONG_RESULT.length} characters, 120 lines`);
    expect(await text('section[data-turn="0"] .environment-reward')).toBe('0');
    expect(await page.$eval('section[data-turn="0"] details.agent-info', (el) => el.hasAttribute('open'))).toBe(false);
  });

  it('marks the fork between the turns, with its reason in words', async () => {
    const markers = await page.$$eval('.fork-marker', (els) =>
      els.map((el) => ({
        before: el.getAttribute('data-fork-before'),
        kind: el.getAttribute('data-fork-kind'),
        after: el.previousElementSibling?.getAttribute('data-turn'),
      })),
    );
    expect(markers).toEqual([{ before: '2', kind: 'dropped-reasoning', after: '1' }]);
    expect(await text('.fork-marker .fork-words')).toBe(
      'the program dropped the reasoning of earlier replies (first at message index 2 of the conversation, counting from 0): turn 3 starts a new token sequence; its context is rendered anew and only its own output is trained on',
    );
    expect(await text('section[data-turn="1"] .feedback-label')).toContain("Messages the program's next call added: none recorded");
  });

  it('shows how the program ended: the answer judged, the turn limit, its own reward', async () => {
    expect(await text('section[data-turn="2"] .end-words')).toBe('The program returned an answer, judged correct by the verifier');
    expect(await text('section[data-turn="2"] .program-answer')).toBe(ANSWER);
    expect(await text('section[data-turn="2"] .agent-end .extracted')).toBe('255');
    expect(await page.$('section[data-turn="2"] .feedback-label')).toBeNull();
    expect(await page.evaluate(() => (globalThis as any).pwned)).toBeUndefined();

    await ui.open(`/trajectories/${encodeURIComponent(LIMITED)}`, 'agent-turns-limit');
    expect(await text('.agent-end')).toContain(
      "Turn limit: the program made a call past the trajectory's 1 turns (the turn limit), so the episode was cut there",
    );
    expect(await text('.judge-text')).toBe("the program made a call past the trajectory's 1 turns: the episode was cut there");

    await ui.open(`/trajectories/${encodeURIComponent(REWARDED)}`);
    expect(await text('.end-words')).toBe('The program returned its own reward: program reward 0.5 · success yes');
    expect(await text('.reply-content')).toBe('ok');
  });

  it("shows a running agent trajectory's call and tool result from its working row", async () => {
    await ui.open(`/trajectories/${encodeURIComponent(RUNNING)}`);
    expect(await text('.call-index')).toBe('0');
    expect(await text('.tool-arguments')).toBe('{"expression": "6*7"}');
    expect(await text('.observation .tool-call-id')).toBe('call_0_0');
    expect(await text('.feedback-label')).toBe("Messages the program's next call added (appended before turn 2 if the trajectory goes on):");
  });
});

describe('ratchet show over an agent trajectory', () => {
  it('prints the calls, the tool results with their ids, the fork and the end', async () => {
    const printed = conversationText(await loadTrajectoryDetails(db.pool, tokenizer, undefined, AGENT));
    expect(printed).toContain('program call index 0 · finish reason tool_calls');
    expect(printed).toContain('tool call calculator<script> (tool_call_id call_0_0): {"expression": "3 * 45", "note": "</pre><i>x</i>"}');
    expect(printed).toContain('tool call unit_convert (tool_call_id call_0_1), arguments not JSON: {"value": 1, oops');
    expect(printed).toContain(`[tool call_0_0] ${HOSTILE}`);
    expect(printed).toContain('[user] keep going');
    expect(printed).toContain('malformed tool call index 0 · kind unknown-tool: Error: there is no tool named "calc"');
    expect(printed).toContain('── fork: the program dropped the reasoning of earlier replies');
    expect(printed).toContain('program ended: The program returned an answer, judged correct by the verifier');
    expect(printed).toContain('extracted answer: 255');
  });
});

describe('fork reasons in words', () => {
  it('says what each kind of fork did', () => {
    expect(forkReasonWords({ kind: 'changed-tools' })).toBe('the program changed the tools it offers the model');
    expect(forkReasonWords({ kind: 'dropped-messages', index: 3, count: 2 })).toBe(
      'the program dropped 2 messages of its history from message index 3 on (counting from 0)',
    );
    expect(forkReasonWords({ kind: 'inserted-messages', index: 1, count: 1 })).toBe(
      'the program inserted 1 message into its history at message index 1 (counting from 0)',
    );
    expect(forkReasonWords({ kind: 'rewrote-message', index: 0, role: 'system', field: 'content' })).toBe(
      'the program rewrote the system message (message index 0 of the conversation so far, counting from 0): its content changed',
    );
    expect(forkReasonWords({ kind: 'something-new' })).toBe("the program's next call rewrote its history (something-new)");
  });
});
