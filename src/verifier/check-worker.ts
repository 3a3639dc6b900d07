import { parentPort } from 'node:worker_threads';
import { judgeExtracted } from './check.js';
import { extractGoldAnswers } from './extract-gold.js';
import { extractModelAnswer } from './extract-model.js';
import type { VerifierRequest, VerifierResponse } from './pool-protocol.js';
import { warmUpSymbolic } from './symbolic.js';

// One verifier thread. Extraction is reported before comparison, so a check killed for its
// budget still says what it was comparing.
const port = parentPort;
if (!port) throw new Error('check-worker must run in a worker thread');

// Warm the engine, the parser's lazily built dictionary and the JIT before the first budgeted check.
warmUpSymbolic();
for (const [gold, output] of [
  ['\\frac{1}{2}', '\\boxed{0.5}'],
  ['\\tan^2 x + 1', '\\boxed{\\sec^2 x}'],
  ['(1,2]', '\\boxed{x \\in (1, 2]}'],
] as const) {
  judgeExtracted(extractGoldAnswers(gold), extractModelAnswer(output));
}

port.on('message', (request: VerifierRequest) => {
  let golds: string[] = [];
  let predicted: string | null = null;
  try {
    golds = extractGoldAnswers(request.gold);
    predicted = typeof request.output === 'string' ? extractModelAnswer(request.output, request.extraction) : null;
    port.postMessage({ kind: 'extracted', id: request.id, gold: golds, predicted } satisfies VerifierResponse);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    const judgement = { equal: false, status: 'error', predicted, gold: golds, detail } as const;
    port.postMessage({ kind: 'verdict', id: request.id, judgement } satisfies VerifierResponse);
    return;
  }
  const judgement =
    typeof request.output === 'string'
      ? judgeExtracted(golds, predicted)
      : { equal: false, status: 'error' as const, predicted, gold: golds, detail: 'model output is not a string' };
  port.postMessage({ kind: 'verdict', id: request.id, judgement } satisfies VerifierResponse);
});

port.postMessage({ kind: 'ready' } satisfies VerifierResponse);
