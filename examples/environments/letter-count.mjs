// @ts-check
/**
 * Count the letters: a TypeScript-side environment the CPU worker runs in-process. Run a worker with
 * `RATCHET_ENVIRONMENTS=examples/environments/letter-count.mjs` and submit requests with
 * `"environment": "letter-count", "environmentArgs": {"word": "strawberry", "letter": "r"}`.
 * @type {import('ratchet-rollouts').Environment}
 */
export default {
  name: 'letter-count',
  async reset(task) {
    const { word, letter } = /** @type {{ word: string; letter: string }} */ (task.args);
    return { messages: [{ role: 'user', content: `How many times does "${letter}" occur in "${word}"? Answer with \\boxed{n}.` }] };
  },
  async step(task, action) {
    const { word, letter } = /** @type {{ word: string; letter: string }} */ (task.args);
    const answer = /\\boxed\{\s*(\d+)\s*\}/.exec(action.text)?.[1];
    const right = word.split(letter).length - 1;
    if (answer === undefined) {
      return { observations: [{ role: 'user', content: 'Answer with \\boxed{n}.' }], reward: -1, success: false, done: false, verdict: 'no_answer' };
    }
    const correct = Number(answer) === right;
    return {
      observations: [{ role: 'user', content: correct ? 'Correct.' : `No, not ${answer}. Count again.` }],
      reward: correct ? 1 : -1, success: correct, done: correct, verdict: correct ? 'correct' : 'wrong', predicted: answer, info: { right },
    };
  },
};
