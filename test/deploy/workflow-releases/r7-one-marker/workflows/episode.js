import { ActivityFailure, ApplicationFailure, proxyActivities, proxyLocalActivities, TimeoutFailure } from '@temporalio/workflow';
import { TimeoutType } from '@temporalio/common';
import { FailureType } from '../trajectory/failure.js';
import { stoppedWithoutEos } from '../trajectory/turn.js';
import { Presets } from './activity-presets.js';
import { turnGenerator } from './turn-affinity.js';
const cpu = proxyLocalActivities(Presets.cpuStep);
const sandboxed = proxyLocalActivities(Presets.sandboxStep);
/** The episode's parts: a start and a step (release 3–4's, an in-process or a remote environment's) and a generator. */
export function episodeOf(input, release) {
    const generate = release.affinity ? turnGenerator(input.timeouts) : sharedGenerator(input.timeouts);
    const { environment } = input;
    if (!release.environments || environment === undefined)
        return { ...seedSteps(input), generate };
    if (release.boundedEnvironments && environment.unserved !== undefined) {
        // A name nothing serves: say so now, instead of waiting on a task queue no worker polls.
        const unserved = ApplicationFailure.nonRetryable(environment.unserved, FailureType.UnknownEnvironment);
        return { start: () => Promise.reject(unserved), step: () => Promise.reject(unserved), generate };
    }
    const bounds = release.boundedEnvironments ? Presets.environmentBounds(input.timeouts, environment.slowSteps ?? false) : undefined;
    const steps = environment.taskQueue === undefined ? inProcessSteps(input, environment, bounds) : remoteSteps(input, environment, environment.taskQueue, bounds);
    return { ...steps, generate };
}
function sharedGenerator(timeouts) {
    const gpu = proxyActivities(Presets.generation(timeouts));
    return (input) => gpu.generate(input);
}
/** Releases 3–4: the math prompt and verifier, or a code task's prompt and judge; no environment named. */
function seedSteps({ request, options }) {
    const { trajectoryId, problem, gold, code } = request;
    return {
        start: () => cpu.tokenizePrompt({ trajectoryId, problem, code: code !== undefined }),
        step: (turn, finishReason) => (code ? sandboxed : cpu).environmentStep({
            trajectoryId,
            turn,
            gold,
            outputHadEos: !stoppedWithoutEos(finishReason),
            extraction: options.answerExtraction,
            ...(code ? { code } : {}),
        }),
    };
}
/** The request's fields an environment's steps read. */
function taskOf({ request, options }) {
    const { trajectoryId, qid, problem, gold } = request;
    return {
        trajectoryId,
        qid,
        problem,
        gold,
        extraction: options.answerExtraction,
        ...(request.code ? { code: request.code } : {}),
        ...(request.environmentArgs ? { args: request.environmentArgs } : {}),
    };
}
/**
 * A built-in or worker-given environment, run in the CPU worker as local activities. Release 6 bounds its code
 * (attempts and deadline, counted by the activity); release 5 ran it unbounded, with the sandbox's timeout for any
 * environment but `math`.
 */
function inProcessSteps(input, placement, bounds) {
    const task = taskOf(input);
    const environment = placement.name;
    const stepper = bounds ? proxyLocalActivities(Presets.environmentStep(bounds)) : placement.name === 'math' ? cpu : sandboxed;
    const bounded = bounds ? { bounds } : {};
    return {
        start: () => (bounds ? stepper : cpu).tokenizePrompt({ ...task, environment, ...bounded }),
        step: (turn, finishReason, state) => stepper.environmentStep({
            ...task,
            turn,
            environment,
            finishReason,
            outputHadEos: !stoppedWithoutEos(finishReason),
            ...(state === undefined ? {} : { state }),
            ...bounded,
        }),
    };
}
/**
 * An environment on its own task queue: each reset and step a retried, recorded activity on its worker, kept and
 * tokenized by the CPU worker's steps. Release 6 gives it the same attempts and deadline as in-process code, and
 * names what a timeout means: a deadline passed (`EnvironmentTimeout`) or heartbeats stopped (`EnvironmentWorkerLost`).
 */
function remoteSteps(input, placement, taskQueue, bounds) {
    const { request, timeouts } = input;
    const { trajectoryId, qid, problem, gold } = request;
    const environment = placement.name;
    const remote = proxyActivities(bounds ? Presets.remoteEnvironment(bounds, timeouts, taskQueue) : Presets.remoteEnvironmentRelease5(timeouts, taskQueue));
    const typed = bounds ? typedTimeouts(environment, bounds) : (call) => call;
    const remoteTask = { trajectoryId, qid, environment, problem, gold, args: request.environmentArgs ?? null, seed: placement.seed };
    return {
        start: async () => cpu.tokenizePrompt({ trajectoryId, problem, started: await typed(remote.environmentReset(remoteTask)) }),
        step: async (turn, finishReason, state) => {
            const { text } = await cpu.answerText({ trajectoryId, turn });
            const taken = await typed(remote.environmentStep({ ...remoteTask, turn, text, finishReason, state: state ?? null }));
            return cpu.environmentStep({ trajectoryId, turn, gold, environment, outputHadEos: !stoppedWithoutEos(finishReason), taken });
        },
    };
}
/** A remote call's timeouts, typed by what they mean; every other failure passes as its worker typed it. */
function typedTimeouts(environment, bounds) {
    return async (call) => {
        try {
            return await call;
        }
        catch (error) {
            const timeout = error instanceof ActivityFailure && error.cause instanceof TimeoutFailure ? error.cause : undefined;
            if (timeout?.timeoutType === TimeoutType.START_TO_CLOSE) {
                throw ApplicationFailure.nonRetryable(`environment ${environment} did not answer within ${bounds.seconds} s on any of ${bounds.attempts} attempts (environmentStepSeconds)`, FailureType.EnvironmentTimeout);
            }
            if (timeout?.timeoutType === TimeoutType.HEARTBEAT) {
                throw ApplicationFailure.nonRetryable(`environment ${environment}'s worker stopped heartbeating on ${bounds.attempts} attempts (environmentHeartbeatSeconds)`, FailureType.EnvironmentWorkerLost);
            }
            throw error;
        }
    };
}
//# sourceMappingURL=episode.js.map