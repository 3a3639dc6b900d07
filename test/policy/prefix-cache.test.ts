import { describe, expect, it } from 'vitest';
import { PREFIX_BLOCK_TOKENS, PrefixCache } from '../../src/policy/simulated/prefix-cache.js';

/** `count` distinct tokens starting at `from`. */
const tokens = (count: number, from = 1000) => Array.from({ length: count }, (_, i) => from + i);

describe('PrefixCache (vLLM automatic prefix caching)', () => {
  it("uses vLLM's block size of 16 tokens", () => {
    expect(PREFIX_BLOCK_TOKENS).toBe(16);
    expect(new PrefixCache(1_000).blockTokens).toBe(16);
  });

  it('hits nothing when empty, and only whole blocks of a prompt it has seen', () => {
    const cache = new PrefixCache(10_000);
    const prompt = tokens(40);
    expect(cache.lookup(prompt)).toBe(0);
    cache.insert(prompt);
    // 40 tokens are two whole blocks (32) and a partial one, which is never cached.
    expect(cache.cachedTokens).toBe(32);
    expect(cache.lookup(prompt)).toBe(32);
  });

  it("hits the whole of an earlier prompt and output that the next turn's prompt extends", () => {
    const cache = new PrefixCache(10_000);
    const turn1 = [...tokens(37), ...tokens(30, 5000)]; // prompt + output: 67 tokens, 4 whole blocks
    cache.insert(turn1);
    const turn2 = [...turn1, ...tokens(25, 9000)];
    expect(cache.lookup(turn2)).toBe(64);
    cache.insert(turn2); // 92 tokens: 5 whole blocks
    expect(cache.lookup([...turn2, 1, 2, 3])).toBe(80);
  });

  it('never hits the whole prompt: its last token is always computed, as in vLLM', () => {
    const cache = new PrefixCache(10_000);
    const prompt = tokens(32);
    cache.insert(prompt);
    expect(cache.lookup(prompt)).toBe(16);
    expect(cache.lookup([...prompt, 7])).toBe(32);
  });

  it('stops the hit at the block of the first diverging token', () => {
    const cache = new PrefixCache(10_000);
    const prompt = tokens(80);
    cache.insert(prompt);
    const diverged = [...prompt];
    diverged[37] = 1; // in the third block (tokens 32-47)
    expect(cache.lookup(diverged)).toBe(32);
    diverged[0] = 2; // in the first block: nothing after it can hit either, though blocks 2-5 are identical
    expect(cache.lookup(diverged)).toBe(0);
  });

  it('keys a block by everything before it: the same tokens after a different prefix miss', () => {
    const cache = new PrefixCache(10_000);
    const shared = tokens(16, 7000);
    cache.insert([...tokens(16, 1), ...shared]);
    expect(cache.lookup([...tokens(16, 2), ...shared, 0])).toBe(0);
  });

  it('evicts the least recently used blocks beyond its capacity, the tail of a conversation first', () => {
    const cache = new PrefixCache(64); // 4 blocks
    const a = tokens(48, 1); // 3 blocks
    const b = tokens(32, 5000); // 2 blocks
    cache.insert(a);
    cache.insert(b);
    expect(cache.cachedTokens).toBe(64);
    // a was used least recently: its last block went first, so its first two still hit.
    expect(cache.lookup([...a, 0])).toBe(32);
    expect(cache.lookup([...b, 0])).toBe(32);
    // A lookup counts as a use: b is now the more recent, so a third prompt evicts what is left of a.
    cache.insert(tokens(32, 9000));
    expect(cache.lookup([...a, 0])).toBe(0);
    expect(cache.lookup([...b, 0])).toBe(32);
    expect(cache.cachedTokens).toBe(64);
  });

  it('keeps the head of a sequence longer than its capacity', () => {
    const cache = new PrefixCache(32);
    const long = tokens(100);
    cache.insert(long);
    expect(cache.cachedTokens).toBe(32);
    expect(cache.lookup(long)).toBe(32);
  });

  it('caches nothing with a capacity of 0 (or less than a block)', () => {
    for (const capacity of [0, 15]) {
      const cache = new PrefixCache(capacity);
      expect(cache.enabled).toBe(false);
      cache.insert(tokens(100));
      expect(cache.lookup(tokens(100))).toBe(0);
      expect(cache.cachedTokens).toBe(0);
    }
  });

  it('rejects a negative capacity', () => {
    expect(() => new PrefixCache(-1)).toThrow(/capacity/);
  });
});
