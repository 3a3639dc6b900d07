import { beforeAll, describe, expect, it } from 'vitest';
import { feedbackTokens, observationTokens, promptIds, startIds } from '../../src/tokens/conversation-tokens.js';
import { FEEDBACK_CORRECT, FEEDBACK_WRONG, mathUserMessage } from '../../src/tokens/math-prompt.js';
import { loadModelTokenizer, TokenizerLoadError, type ChatMessage, type ModelTokenizer } from '../../src/tokens/model-tokenizer.js';

const PROBLEM = 'What is $6 \\times 7$?';

let tok: ModelTokenizer;
beforeAll(async () => {
  tok = await loadModelTokenizer();
});

/** Builds a conversation the way the workflow does: keep every token, append outputs and feedback. */
function keptConversation(answers: readonly { text: string; success: boolean; eos: boolean }[]): { contexts: number[][]; ids: number[] } {
  let ids = promptIds(tok, PROBLEM);
  const contexts = [ids];
  for (const answer of answers) {
    const output = answer.eos ? [...tok.encode(answer.text), tok.eosTokenId] : tok.encode(answer.text);
    ids = [...ids, ...output, ...feedbackTokens(tok, answer.success, answer.eos).ids];
    contexts.push(ids);
  }
  return { contexts, ids };
}

function renderedConversation(answers: readonly { text: string; success: boolean }[], upTo = answers.length): string {
  const messages: ChatMessage[] = [{ role: 'user', content: mathUserMessage(PROBLEM) }];
  for (const answer of answers.slice(0, upTo)) {
    messages.push({ role: 'assistant', content: answer.text }, { role: 'user', content: answer.success ? FEEDBACK_CORRECT : FEEDBACK_WRONG });
  }
  return tok.renderChat(messages, true);
}

describe("observation tokens (any environment's messages after a turn)", () => {
  it("are the seed's feedback tokens when the observation is the seed's feedback sentence", () => {
    for (const success of [true, false]) {
      for (const eos of [true, false]) {
        expect(observationTokens(tok, [{ role: 'user', content: success ? FEEDBACK_CORRECT : FEEDBACK_WRONG }], eos)).toEqual(
          feedbackTokens(tok, success, eos),
        );
      }
    }
  });

  it('render a tool message and a user message as the template renders them after the assistant turn, history untouched', () => {
    const answer = 'print(2**10)';
    const messages = [
      { role: 'tool', content: '1024' },
      { role: 'user', content: 'Now the final answer.' },
    ];
    const kept = [
      ...startIds(tok, { messages: [{ role: 'user', content: 'q' }] }),
      ...tok.encode(answer),
      tok.eosTokenId,
      ...observationTokens(tok, messages, true).ids,
    ];
    const rendered = tok.renderChat([{ role: 'user', content: 'q' }, { role: 'assistant', content: answer }, ...messages], true);
    expect(tok.decodeAll(kept)).toBe(rendered);
    expect(rendered).toContain('1024');
  });

  it('start from a rendered prompt as it is', () => {
    const rendered = '<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n';
    expect(startIds(tok, { renderedPrompt: rendered })).toEqual(tok.encode(rendered));
  });
});

describe('promptIds', () => {
  it('encodes the math user message rendered by the chat template with a generation prompt', () => {
    const ids = promptIds(tok, PROBLEM);
    const rendered = tok.renderChat([{ role: 'user', content: mathUserMessage(PROBLEM) }], true);
    expect(tok.decodeAll(ids)).toBe(rendered);
    expect(rendered).toContain('\\boxed{}');
    expect(rendered.endsWith('<|im_start|>assistant\n')).toBe(true);
  });

  it('adds no BOS or other extra special token', () => {
    const ids = promptIds(tok, PROBLEM);
    expect(ids).toEqual(tok.encode(tok.renderChat([{ role: 'user', content: mathUserMessage(PROBLEM) }], true)));
    expect(tok.decodeAll(ids.slice(0, 1))).toBe('<|im_start|>');
  });
});

describe('feedbackTokens', () => {
  it('renders the correct-answer feedback as a user turn followed by the generation prompt', () => {
    const feedback = feedbackTokens(tok, true, true);
    expect(feedback.text).toBe(`\n<|im_start|>user\n${FEEDBACK_CORRECT}<|im_end|>\n<|im_start|>assistant\n`);
    expect(tok.decodeAll(feedback.ids)).toBe(feedback.text);
  });

  it('renders the wrong-answer feedback text', () => {
    const feedback = feedbackTokens(tok, false, true);
    expect(FEEDBACK_WRONG).toBe("Unfortunately your answer is wrong. Let's try again.");
    expect(feedback.text).toContain(FEEDBACK_WRONG);
    expect(feedback.text).not.toContain(FEEDBACK_CORRECT);
    expect(tok.decodeAll(feedback.ids)).toBe(feedback.text);
  });

  it('uses the exact feedback sentences of the seed', () => {
    expect(FEEDBACK_CORRECT).toBe('Congratulations! You are correct!');
    expect(feedbackTokens(tok, true, true).text).toContain('Congratulations! You are correct!');
    expect(feedbackTokens(tok, false, true).text).toContain("Unfortunately your answer is wrong. Let's try again.");
  });

  it('starts with the EOS token when the output was cut off without one', () => {
    const cut = feedbackTokens(tok, false, false);
    const ended = feedbackTokens(tok, false, true);
    expect(cut.ids[0]).toBe(tok.eosTokenId);
    expect(cut.ids.slice(1)).toEqual(ended.ids);
    expect(ended.ids[0]).not.toBe(tok.eosTokenId);
  });
});

describe('a token-kept conversation', () => {
  const plain = [
    { text: 'Six times seven is $6 \\cdot 7 = 48$, so the answer is $\\boxed{48}$.', success: false, eos: true },
    { text: 'Let me recompute: $6 \\cdot 7 = 42$. The answer is $\\boxed{42}$.', success: true, eos: true },
  ];

  it("decodes to exactly the chat template's rendering of the whole conversation", () => {
    const { ids } = keptConversation(plain);
    expect(tok.decodeAll(ids)).toBe(renderedConversation(plain));
  });

  it('matches the rendering after every turn, each context a strict prefix of the next', () => {
    const { contexts } = keptConversation(plain);
    expect(contexts).toHaveLength(3);
    contexts.forEach((context, t) => expect(tok.decodeAll(context)).toBe(renderedConversation(plain, t)));
    for (let t = 0; t + 1 < contexts.length; t++) {
      const [shorter, longer] = [contexts[t]!, contexts[t + 1]!];
      expect(longer.length).toBeGreaterThan(shorter.length);
      expect(longer.slice(0, shorter.length)).toEqual(shorter);
    }
  });

  it('matches the rendering when a turn was cut off without EOS', () => {
    const cutOff = [{ ...plain[0]!, eos: false }, plain[1]!];
    expect(tok.decodeAll(keptConversation(cutOff).ids)).toBe(renderedConversation(cutOff));
  });

  it('differs from re-rendering the history once answers hold think blocks, which is why tokens are kept', () => {
    const thinking = [
      { text: '<think>\nSix sevens... maybe 48?\n</think>\n\nThe answer is $\\boxed{48}$.', success: false, eos: true },
      { text: '<think>\nRecount: 6 * 7 = 42.\n</think>\n\nThe answer is $\\boxed{42}$.', success: true, eos: true },
    ];
    const kept = tok.decodeAll(keptConversation(thinking).ids);
    const rerendered = renderedConversation(thinking);
    expect(kept).not.toBe(rerendered);
    // the kept context still holds what the policy actually generated; the template drops earlier reasoning
    expect(kept).toContain('Six sevens... maybe 48?');
    expect(rerendered).not.toContain('Six sevens... maybe 48?');
  });
});

describe('loadModelTokenizer', () => {
  it('rejects a missing directory with a TokenizerLoadError naming the path', async () => {
    const failure = loadModelTokenizer('/nonexistent');
    await expect(failure).rejects.toBeInstanceOf(TokenizerLoadError);
    await expect(failure).rejects.toThrow(/\/nonexistent/);
  });

  it('loads the bundled Qwen3 tokenizer with <|im_end|> as EOS', () => {
    expect(tok.eosToken).toBe('<|im_end|>');
    expect(tok.decodeAll([tok.eosTokenId])).toBe('<|im_end|>');
  });
});
