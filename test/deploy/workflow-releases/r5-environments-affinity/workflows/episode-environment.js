import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import { stoppedWithoutEos } from '../trajectory/turn.js';
const retry = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' };
const cpu = proxyLocalActivities({ startToCloseTimeout: '20s', retry });
// A step that runs code (a code answer's tests, a tool call) gets a sandbox's time: up to two minutes.
const sandboxed = proxyLocalActivities({ startToCloseTimeout: '120s', retry });
/**
 * The request's environment (release 5). A built-in or worker-given one runs in the CPU worker, as local activities;
 * any other runs on its own task queue, each reset and step a retried, recorded activity (its worker heartbeats, so a
 * killed one is noticed within `environmentHeartbeatSeconds`), kept and tokenized by the CPU worker's steps.
 */
export function episodeEnvironment(request, placement, options, timeouts) {
    const { trajectoryId, qid, problem, gold } = request;
    const environment = placement.name;
    const task = {
        trajectoryId, qid, problem, gold, extraction: options.answerExtraction,
        ...(request.code ? { code: request.code } : {}), ...(request.environmentArgs ? { args: request.environmentArgs } : {}),
    };
    const stepLocally = environment === 'math' ? cpu : sandboxed;
    if (placement.taskQueue === undefined) {
        return {
            start: () => cpu.tokenizePrompt({ ...task, environment }),
            step: (turn, finishReason, state) => stepLocally.environmentStep({
                ...task, turn, environment, finishReason, outputHadEos: !stoppedWithoutEos(finishReason), ...(state === undefined ? {} : { state }),
            }),
        };
    }
    const remote = proxyActivities({
        taskQueue: placement.taskQueue,
        startToCloseTimeout: `${timeouts.environmentStepSeconds ?? 300}s`,
        heartbeatTimeout: `${timeouts.environmentHeartbeatSeconds ?? 10}s`,
        retry: { ...retry, maximumAttempts: 5 },
    });
    const remoteTask = { trajectoryId, qid, environment, problem, gold, args: request.environmentArgs ?? null, seed: placement.seed };
    return {
        start: async () => cpu.tokenizePrompt({ trajectoryId, problem, started: await remote.environmentReset(remoteTask) }),
        step: async (turn, finishReason, state) => {
            const { text } = await cpu.answerText({ trajectoryId, turn });
            const taken = await remote.environmentStep({ ...remoteTask, turn, text, finishReason, state: state ?? null });
            return cpu.environmentStep({ trajectoryId, turn, gold, environment, outputHadEos: !stoppedWithoutEos(finishReason), taken });
        },
    };
}
//# sourceMappingURL=episode-environment.js.map