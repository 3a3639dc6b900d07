import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { InferenceBackend, StreamRequest, TokenChunk } from '../../src/policy/inference-backend.js';
import { PolicyRejectedRequest, PolicyUnavailable } from '../../src/policy/policy-errors.js';
import { closedPort } from './fakes/fake-http.js';
import { DEFAULT_SAMPLING } from '../../src/trajectory/sampling.js';

/** What the server under test saw of one request, as the contract needs it. */
export interface ServerRecord {
  /** The prompt exactly as received (token ids, or whatever else arrived). */
  prompt: unknown;
  sentIds: number[];
  sentLogprobs: number[];
  end?: string;
}

/** A running server and a backend talking to it; `served` looks a request up by our request id. */
export interface ContractServer {
  backend: InferenceBackend;
  /** Builds the same kind of backend for another URL (an unreachable one, for the failure cases). */
  backendAt(url: string): InferenceBackend;
  prompt: number[];
  contextWindow: number;
  /** Whether the server tags tokens with the weight version (SGLang does, vLLM does not). */
  reportsWeightVersion: boolean;
  /** A checkpoint the server can load as policy `version` (a real server reloads real files). */
  checkpoint(version: number): string;
  /** New tokens for the full-length requests: a real CPU server is slower than a fake. Default 1024. */
  longRequestTokens?: number;
  served(requestId: string): ServerRecord | undefined;
  setFault(fault: 'none' | 'error' | 'drop'): void;
  close(): Promise<void>;
}

/**
 * The behaviour every inference backend owes the GPU worker, run against a real server or a faithful fake, as
 * hono's routers all run `router/common.case.test.ts`.
 */
export function runBackendContract(name: string, start: () => Promise<ContractServer>): void {
  describe(`${name} backend contract`, () => {
    let server: ContractServer;
    beforeAll(async () => {
      server = await start();
    });
    afterEach(() => server.setFault('none'));
    afterAll(async () => {
      await server?.close();
    });

    function request(overrides: Partial<StreamRequest> = {}): StreamRequest {
      return {
        inputIds: server.prompt,
        maxNewTokens: server.longRequestTokens ?? 1024,
        sampling: DEFAULT_SAMPLING,
        requestId: `contract-${randomUUID()}`,
        ...overrides,
      };
    }

    async function collect(req: StreamRequest, onChunk?: (chunk: TokenChunk, all: TokenChunk[]) => void) {
      const chunks: TokenChunk[] = [];
      const end = await server.backend.generate(req, (chunk) => {
        chunks.push(chunk);
        onChunk?.(chunk, chunks);
      });
      return { end, chunks, ids: chunks.flatMap((c) => c.ids), logprobs: chunks.flatMap((c) => c.logprobs) };
    }

    async function endOf(requestId: string): Promise<string | undefined> {
      await vi.waitFor(() => expect(server.served(requestId)?.end).toBeDefined(), { timeout: 3_000 });
      return server.served(requestId)?.end;
    }

    it('streams in several chunks that concatenate to exactly the tokens the server sent, ending as the server ended', async () => {
      const req = request();
      const { end, chunks, ids, logprobs } = await collect(req);
      // The fakes reach EOS; a random-weight real model almost never does, and stops at the length limit.
      expect(['stop', 'length']).toContain(end.finishReason);
      expect(end.finishReason).toBe(server.served(req.requestId)!.end);
      expect(chunks.length).toBeGreaterThan(1);
      for (const chunk of chunks) expect(chunk.logprobs).toHaveLength(chunk.ids.length);
      expect(ids).toEqual(server.served(req.requestId)!.sentIds);
      expect(logprobs).toEqual(server.served(req.requestId)!.sentLogprobs);
      for (const logprob of logprobs) expect(logprob).toBeLessThanOrEqual(0);
    });

    it('sends the prompt as the exact token id list, never as text', async () => {
      const req = request({ maxNewTokens: 3 });
      await collect(req);
      expect(server.served(req.requestId)!.prompt).toEqual(server.prompt);
    });

    it('stops at maxNewTokens with finish reason length', async () => {
      const req = request({ maxNewTokens: 5 });
      const { end, ids } = await collect(req);
      expect(end.finishReason).toBe('length');
      expect(ids).toHaveLength(5);
      expect(ids).toEqual(server.served(req.requestId)!.sentIds);
    });

    // Only a prompt that alone overflows the window is refused by every server: vLLM caps max_tokens to the room
    // left (SGLang refuses prompt + max_new_tokens over the window), and the worker budgets to the window anyway.
    it("rejects a prompt longer than the window as PolicyRejectedRequest with the server's message", async () => {
      const failure = collect(
        request({ inputIds: Array.from({ length: server.contextWindow + 1 }, (_, i) => server.prompt[i % server.prompt.length]!), maxNewTokens: 8 }),
      );
      await expect(failure).rejects.toBeInstanceOf(PolicyRejectedRequest);
      await expect(failure).rejects.toThrow(/maximum context length/);
    });

    it('reports a server error (5xx) as PolicyUnavailable', async () => {
      server.setFault('error');
      await expect(collect(request())).rejects.toBeInstanceOf(PolicyUnavailable);
    });

    it('reports a connection dropped mid-stream as PolicyUnavailable, after the tokens before the drop', async () => {
      server.setFault('drop');
      const req = request();
      const delivered: number[] = [];
      await expect(server.backend.generate(req, (chunk) => delivered.push(...chunk.ids))).rejects.toBeInstanceOf(PolicyUnavailable);
      expect(delivered).toEqual(server.served(req.requestId)!.sentIds.slice(0, delivered.length));
    });

    it("stops the request on the server when the caller's signal aborts", async () => {
      const controller = new AbortController();
      // As long as the window allows (SGLang wants one token of room), so that no server finishes it before the
      // disconnect reaches it: a tiny CPU model streams a short request whole before the first chunk's abort
      // lands, and under load (the test process, which is also the recording proxy, starved) once streamed 1,024.
      const req = request({ signal: controller.signal, maxNewTokens: server.contextWindow - server.prompt.length - 1 });
      const failure = collect(req, () => controller.abort(new Error('caller gave up')));
      await expect(failure).rejects.toThrow('caller gave up');
      expect(['disconnect', 'abort']).toContain(await endOf(req.requestId));
    });

    it('ends a stream aborted by request id with abort, after the tokens so far', async () => {
      // As long as the window allows, as above: a real vLLM once streamed all of longRequestTokens (48) before the abort
      // sent at the first chunk reached it, and ended the stream with `length`.
      const req = request({ maxNewTokens: server.contextWindow - server.prompt.length - 1 });
      const { end, ids } = await collect(req, (_, all) => {
        if (all.length === 1) void server.backend.abort(req.requestId);
      });
      expect(end.finishReason).toBe('abort');
      expect(ids.length).toBeGreaterThan(0);
      expect(ids).toEqual(server.served(req.requestId)!.sentIds.slice(0, ids.length));
      expect(['disconnect', 'abort']).toContain(await endOf(req.requestId));
    });

    it('ends a stream with abort when the weights are updated under it, keeping the tokens before', async () => {
      const req = request();
      let update: Promise<void> | undefined;
      const { end, ids, chunks } = await collect(req, (_, all) => {
        if (all.length === 1) update = server.backend.updateWeights(11, server.checkpoint(11));
      });
      await update;
      expect(end.finishReason).toBe('abort');
      expect(ids.length).toBeGreaterThan(0);
      expect(ids).toEqual(server.served(req.requestId)!.sentIds.slice(0, ids.length));
      for (const chunk of chunks) expect(chunk.weightVersion).not.toBe(11);
    });

    it('tags the chunks generated after a weight update with the new version', async () => {
      await server.backend.updateWeights(12, server.checkpoint(12));
      const { chunks } = await collect(request({ maxNewTokens: 16 }));
      for (const chunk of chunks) expect(chunk.weightVersion).toBe(server.reportsWeightVersion ? 12 : undefined);
    });

    it("scores a prompt for the weights proof: null first, then each position's finite logprob, the same when asked again, changed by a reload", async () => {
      const scored = await server.backend.scorePrompt(server.prompt);
      expect(scored).toHaveLength(server.prompt.length);
      expect(scored[0]).toBeNull();
      for (const logprob of scored.slice(1)) {
        expect(Number.isFinite(logprob)).toBe(true);
        expect(logprob!).toBeLessThanOrEqual(0);
      }
      expect(await server.backend.scorePrompt(server.prompt)).toEqual(scored);
      await server.backend.updateWeights(13, server.checkpoint(13));
      const reloaded = await server.backend.scorePrompt(server.prompt);
      await server.backend.updateWeights(14, server.checkpoint(14));
      expect(await server.backend.scorePrompt(server.prompt)).not.toEqual(reloaded);
    });

    it('reports health: true for the server, false for an unreachable one', async () => {
      expect(await server.backend.health()).toBe(true);
      expect(await server.backendAt(`http://127.0.0.1:${await closedPort()}`).health()).toBe(false);
    });

    it('reads the context window from the server', async () => {
      expect(await server.backend.contextWindow()).toBe(server.contextWindow);
    });

    it('reports an unreachable server as PolicyUnavailable naming its URL', async () => {
      const url = `http://127.0.0.1:${await closedPort()}`;
      const failure = server.backendAt(url).generate(request(), () => undefined);
      await expect(failure).rejects.toBeInstanceOf(PolicyUnavailable);
      await expect(failure).rejects.toThrow(url);
    });
  });
}
