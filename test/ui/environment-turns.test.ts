import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { compactJson } from '../../src/ui/compact-json.js';
import { conversationText } from '../../src/ui/conversation-text.js';
import { LONG_OBSERVATION_CHARS } from '../../src/ui/pages/observations.js';
import { loadTrajectoryDetails } from '../../src/ui/trajectory-details.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';
import { SCREENSHOTS, startUiBrowser, type UiBrowser } from './ui-browser.js';

// Postgres alone (no Temporal): turns as environments store them (`environment_step`), beside a turn from before them.
let db: TestDatabase;
let ui: UiBrowser;
let page: Page;

const STORED = 'env/game/1/0';
const OLD = 'env/old/1/0';
const RUNNING = 'env/game/2/0';
const DANGEROUS = '<script>window.pwned = 1</script>\n<b>not bold</b> & "quoted"';
const LONG = Array.from({ length: 200 }, (_, i) => `line ${i}: ${'x'.repeat(20)}`).join('\n');
const INFO = {
  tool: 'search',
  calls: 1,
  hits: [{ title: '<img src=x onerror=alert(1)>', score: 0.75 }],
  note: 'a note long enough to break the line over several lines of its own',
};
const STATE = { board: Array.from({ length: 8 }, () => '........'), moves: ['e4', 'e5'] };
const OLD_FEEDBACK = "<|im_end|>\n<|im_start|>user\nUnfortunately your answer is wrong. Let's try again.<|im_end|>\n<|im_start|>assistant\n";

async function storeTrajectory(id: string, environment: string | null, rawRewards: number[], returns: number[]): Promise<void> {
  await db.pool.query(
    `INSERT INTO trajectories (trajectory_id, qid, status, layout, num_turns, birth_time, rewards, raw_rewards, successes, seq_no_eos_mask, output_tokens, end_reason, environment)
     VALUES ($1, 'game/1', 'completed', 'seed', $2, 0, $3, $4, $5, $6, 10, 'done', $7)`,
    [id, rawRewards.length, returns, rawRewards, rawRewards.map((r) => r > 0), rawRewards.map(() => false), environment],
  );
}

async function storeTurnText(id: string, turn: number, verdict: string, feedback: string | null, step: unknown): Promise<void> {
  await db.pool.query(
    `INSERT INTO turn_texts (trajectory_id, turn, answer_text, extracted_answer, verdict, feedback_text, environment_step) VALUES ($1, $2, 'answer', NULL, $3, $4, $5)`,
    [id, turn, verdict, feedback, step === null ? null : JSON.stringify(step)],
  );
}

beforeAll(async () => {
  db = await startTestDatabase();
  // Two turns in a tool environment: a tool result (HTML in it) and a system note, then a long user message ending it.
  await storeTrajectory(STORED, 'tool-game', [0.25, 1.5], [1.75, 1.5]);
  await storeTurnText(STORED, 0, 'tool_call', '<|im_end|>\n<|im_start|>tool\n…', {
    observations: [
      { role: 'tool', content: DANGEROUS },
      { role: 'system', content: 'two calls left' },
    ],
    reward: 0.5,
    done: false,
    info: INFO,
    state: STATE,
  });
  await storeTurnText(STORED, 1, 'correct', null, { observations: [{ role: 'user', content: LONG }], reward: 1, done: true, info: {} });
  // A trajectory stored before environments: no environment, no environment_step, its feedback text alone.
  await storeTrajectory(OLD, null, [-1], [-1]);
  await storeTurnText(OLD, 0, 'wrong', OLD_FEEDBACK, null);
  // A running one: its working row holds the step.
  await db.pool.query(`INSERT INTO trajectory_prompts (trajectory_id, prompt_ids, prompt_text) VALUES ($1, '\\x01000000', 'p')`, [RUNNING]);
  await db.pool.query(
    `INSERT INTO turn_outputs (trajectory_id, turn, attempt, context_len, output_ids, output_logprobs, finish_reason, version_start, version_end, verdict, feedback_text, environment_step)
     VALUES ($1, 0, 1, 1, '\\x0100000002000000', '\\x0000000000000000', 'stop', 0, 0, 'tool_call', 'appended', $2)`,
    [
      RUNNING,
      JSON.stringify({
        observations: [{ role: 'tool', content: '</pre><script>window.pwned = 2</script>' }],
        reward: -0.125,
        done: false,
        info: { step: 1 },
      }),
    ],
  );
  ui = await startUiBrowser(db.pool);
  page = ui.page;
}, 60_000);

afterAll(async () => {
  await ui?.close();
  await db?.stop();
});

const text = (selector: string) => page.$eval(selector, (el) => el.textContent ?? '');
const observations = (turn: number) =>
  page.$$eval(`section[data-turn="${turn}"] .observation`, (els) =>
    els.map((el) => ({
      tag: el.tagName.toLowerCase(),
      role: el.getAttribute('data-role'),
      label: el.querySelector('.role')?.textContent,
      content: el.querySelector('pre')?.textContent,
      open: el.hasAttribute('open'),
    })),
  );

describe('a trajectory page over environment steps', () => {
  it("names the environment and shows each turn's observations by role, escaped", async () => {
    const response = await page.goto(`${ui.url}/trajectories/${encodeURIComponent(STORED)}`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    if (SCREENSHOTS) await page.screenshot({ path: `${SCREENSHOTS}/environment-turns.png`, fullPage: true });
    const source = await response!.text();
    // The content is text, never markup: no script of its ran, its tags are escaped in the page's source.
    expect(source).not.toContain('<script>window.pwned');
    expect(source).toContain('&lt;script&gt;window.pwned = 1&lt;/script&gt;');
    expect(source).not.toContain('<img src=x');
    expect(await page.evaluate(() => (globalThis as any).pwned)).toBeUndefined();
    expect(await text('#environment')).toBe('tool-game');
    expect(await observations(0)).toEqual([
      { tag: 'div', role: 'tool', label: 'tool', content: DANGEROUS, open: false },
      { tag: 'div', role: 'system', label: 'system', content: 'two calls left', open: false },
    ]);
    expect(await text('section[data-turn="0"] .feedback-label')).toBe('Observations (appended as tokens before turn 2):');
    // The text as appended (the chat template's) is kept, folded.
    expect(await page.$eval('section[data-turn="0"] details.appended', (el) => el.hasAttribute('open'))).toBe(false);
    expect(await text('section[data-turn="0"] details.appended pre.feedback')).toBe('<|im_end|>\n<|im_start|>tool\n…');
  });

  it("shows the environment's reward before shaping beside the shaped one, done, and its info as compact JSON", async () => {
    expect(await text('section[data-turn="0"] .environment-reward')).toBe('0.5');
    expect(await text('section[data-turn="0"] .done')).toBe('no');
    expect(await text('section[data-turn="0"] h3')).toContain('reward 0.25 · return 1.75');
    const info = await text('section[data-turn="0"] pre.info');
    // Postgres's jsonb orders keys its own way (shorter first): the page shows them as stored.
    expect(JSON.parse(info)).toEqual(INFO);
    expect(info).toBe(compactJson(JSON.parse(info)));
    expect(info).toContain('\n  "hits": [{"score": 0.75, "title": "<img src=x onerror=alert(1)>"}],\n');
    expect(await text('section[data-turn="1"] .environment-reward')).toBe('1');
    expect(await text('section[data-turn="1"] .done')).toBe('yes');
    // Empty info and no state: nothing shown for them.
    expect(await page.$('section[data-turn="1"] pre.info')).toBeNull();
    expect(await page.$('section[data-turn="1"] details.state')).toBeNull();
  });

  it('folds the state and long observations away', async () => {
    expect(await page.$eval('section[data-turn="0"] details.state', (el) => el.hasAttribute('open'))).toBe(false);
    expect(JSON.parse(await text('section[data-turn="0"] details.state pre'))).toEqual(STATE);
    expect(LONG.length).toBeGreaterThan(LONG_OBSERVATION_CHARS);
    expect(await observations(1)).toEqual([{ tag: 'details', role: 'user', label: 'user', content: LONG, open: false }]);
    expect(await text('section[data-turn="1"] .observation summary')).toContain(`${LONG.length} characters, 200 lines`);
    expect(await text('section[data-turn="1"] .feedback-label')).toBe(
      'Observations for this verdict (never appended: the trajectory ended after this turn, so it is in no context and not trained on):',
    );
  });

  it("shows a running trajectory's steps from its working rows", async () => {
    await ui.open(`/trajectories/${encodeURIComponent(RUNNING)}`);
    expect(await page.evaluate(() => (globalThis as any).pwned)).toBeUndefined();
    expect(await observations(0)).toEqual([
      { tag: 'div', role: 'tool', label: 'tool', content: '</pre><script>window.pwned = 2</script>', open: false },
    ]);
    expect(await text('section[data-turn="0"] .environment-reward')).toBe('-0.125');
    expect(await text('section[data-turn="0"] pre.info')).toBe('{"step": 1}');
  });

  it('shows a turn stored before environments as it did: its feedback text, as a user message', async () => {
    await ui.open(`/trajectories/${encodeURIComponent(OLD)}`, 'environment-turns-old');
    expect(await text('#environment')).toBe('–');
    expect(await text('.feedback-label')).toBe(
      'Feedback for this verdict (never appended: the trajectory ended after this turn, so it is in no context and not trained on):',
    );
    expect(await observations(0)).toEqual([{ tag: 'div', role: 'user', label: 'user', content: OLD_FEEDBACK, open: false }]);
    expect(await text('section[data-turn="0"] pre.feedback')).toBe(OLD_FEEDBACK);
    expect(await page.$('.environment-step')).toBeNull();
  });
});

describe('the trajectory view and ratchet show over environment steps', () => {
  it('carries observations, reward, done, info and state, and null for a turn from before environments', async () => {
    const tokenizer = await loadModelTokenizer();
    const details = await loadTrajectoryDetails(db.pool, tokenizer, undefined, STORED);
    expect(details.view.environment).toBe('tool-game');
    expect(details.view.turns[0]).toMatchObject({
      observations: [
        { role: 'tool', content: DANGEROUS },
        { role: 'system', content: 'two calls left' },
      ],
      environmentReward: 0.5,
      done: false,
      info: INFO,
      state: STATE,
      rawReward: 0.25,
      reward: 1.75,
    });
    expect(details.view.turns[1]).toMatchObject({ environmentReward: 1, done: true, info: {} });
    expect(details.view.turns[1]).not.toHaveProperty('state');
    // `ratchet show --json` prints the details as they are.
    expect(JSON.parse(JSON.stringify(details)).view.turns[0].observations[0].role).toBe('tool');
    const printed = conversationText(details);
    expect(printed).toContain('environment: tool-game');
    expect(printed).toContain(`[tool] ${DANGEROUS}`);
    expect(printed).toContain('[system] two calls left');
    expect(printed).toContain(`environment reward 0.5 · done no · info ${compactJson(details.view.turns[0]!.info)}`);
    const old = await loadTrajectoryDetails(db.pool, tokenizer, undefined, OLD);
    expect(old.view.environment).toBeNull();
    expect(old.view.turns[0]).toMatchObject({ observations: null, environmentReward: null, done: null, info: null, feedbackText: OLD_FEEDBACK });
    expect(conversationText(old)).toContain(`feedback: ${OLD_FEEDBACK.trim()}`);
  });
});

describe('compactJson', () => {
  it('keeps what fits on one line, and breaks bigger values member by member', () => {
    expect(compactJson({ a: 1, b: [1, 2], c: 'x' })).toBe('{"a": 1, "b": [1, 2], "c": "x"}');
    expect(compactJson({ a: 'x'.repeat(50), b: { c: 1, d: 'y'.repeat(60) }, e: [] }, 40)).toBe(
      `{\n  "a": "${'x'.repeat(50)}",\n  "b": {\n    "c": 1,\n    "d": "${'y'.repeat(60)}"\n  },\n  "e": []\n}`,
    );
    expect(compactJson(null)).toBe('null');
    expect(compactJson('<a>')).toBe('"<a>"');
  });
});
