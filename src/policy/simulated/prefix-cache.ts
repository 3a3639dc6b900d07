/** vLLM's default KV-cache block size: only whole blocks of this many tokens are cached and matched. */
export const PREFIX_BLOCK_TOKENS = 16;

/**
 * A prefix cache that behaves like vLLM's automatic prefix caching (v1 KVCacheManager), for a simulated server:
 * a prompt is cut into blocks of `PREFIX_BLOCK_TOKENS` tokens, each block keyed by a hash chained over the blocks
 * before it (a block's key is the hash of its parent's key and its own tokens), so a block can only be hit after
 * every block before it. Only full blocks are cached. It holds at most `capacityTokens / blockTokens` blocks and
 * evicts the least recently used beyond that; a request's blocks are touched tail first, as vLLM frees them in
 * reverse order, so the end of an old conversation is evicted before its start. A capacity of 0 turns it off.
 *
 * Pure: no I/O, no clock, no randomness; the same calls give the same answers.
 */
export class PrefixCache {
  readonly blockTokens: number;
  readonly capacityBlocks: number;
  /** Block key → nothing; a Map iterates in insertion order, so its first key is the least recently used. */
  private readonly blocks = new Map<number, true>();

  constructor(capacityTokens: number, blockTokens = PREFIX_BLOCK_TOKENS) {
    if (!Number.isInteger(blockTokens) || blockTokens < 1) throw new Error(`block size must be a positive integer, not ${blockTokens}`);
    if (!(capacityTokens >= 0)) throw new Error(`prefix cache capacity must be at least 0 tokens, not ${capacityTokens}`);
    this.blockTokens = blockTokens;
    this.capacityBlocks = Math.floor(capacityTokens / blockTokens);
  }

  get enabled(): boolean {
    return this.capacityBlocks > 0;
  }

  /** Tokens now held (whole blocks). */
  get cachedTokens(): number {
    return this.blocks.size * this.blockTokens;
  }

  /**
   * How many leading tokens of the prompt the cache holds: whole blocks only, and never the whole prompt, since
   * vLLM always computes its last token to get the next token's logits (a prompt of exactly 32 cached tokens hits
   * 16). The blocks hit become the most recently used.
   */
  lookup(promptIds: readonly number[]): number {
    if (!this.enabled || promptIds.length === 0) return 0;
    const keys = this.blockKeys(promptIds, Math.floor((promptIds.length - 1) / this.blockTokens));
    let hit = 0;
    while (hit < keys.length && this.blocks.has(keys[hit]!)) hit++;
    this.touch(keys.slice(0, hit));
    return hit * this.blockTokens;
  }

  /** Caches every whole block of `ids` (a prompt and the tokens computed after it), evicting beyond capacity. */
  insert(ids: readonly number[]): void {
    if (!this.enabled) return;
    this.touch(this.blockKeys(ids, Math.floor(ids.length / this.blockTokens)));
    for (const key of this.blocks.keys()) {
      if (this.blocks.size <= this.capacityBlocks) break;
      this.blocks.delete(key);
    }
  }

  /** Makes the blocks the most recently used, last block first, so a chain is evicted from its tail. */
  private touch(keys: readonly number[]): void {
    for (let i = keys.length - 1; i >= 0; i--) {
      this.blocks.delete(keys[i]!);
      this.blocks.set(keys[i]!, true);
    }
  }

  /** The chained keys of the first `count` whole blocks. */
  private blockKeys(ids: readonly number[], count: number): number[] {
    const keys: number[] = [];
    let parent = 0;
    for (let block = 0; block < count; block++) {
      parent = blockHash(parent, ids, block * this.blockTokens, (block + 1) * this.blockTokens);
      keys.push(parent);
    }
    return keys;
  }
}

/**
 * A 53-bit hash of a parent key and the tokens [start, end): two independently seeded 32-bit multiply-xorshift
 * lanes (cyrb53), exact as a JS number. With the ~10^5 blocks of a 2M-token cache, a collision is a one in 10^6
 * event, as good as a simulation needs (vLLM itself hashes with sha256).
 */
function blockHash(parent: number, ids: readonly number[], start: number, end: number): number {
  let h1 = 0xdeadbeef ^ (parent >>> 0);
  let h2 = 0x41c6ce57 ^ Math.floor(parent / 0x100000000);
  for (let i = start; i < end; i++) {
    const token = ids[i]!;
    h1 = Math.imul(h1 ^ token, 2654435761);
    h2 = Math.imul(h2 ^ token, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
