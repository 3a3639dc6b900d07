import { ApplicationFailure, CancellationScope, ContinueAsNew, continueAsNew, isCancellation, patched, proxyActivities, proxyLocalActivities, setCurrentDetails, setHandler, upsertSearchAttributes, workflowInfo, } from '@temporalio/workflow';
import { returnsToGo, shapeEnvironmentReward, shapeReward } from '../trajectory/rewards.js';
import { samplingOf } from '../trajectory/sampling.js';
import { stoppedWithoutEos } from '../trajectory/turn.js';
import { FailureType } from '../trajectory/failure.js';
import { CPU_TASK_QUEUE, GPU_TASK_QUEUE } from '../task-queues.js';
import { episodeEnvironment } from './episode-environment.js';
import { turnGenerator } from './turn-affinity.js';
import { awaitAdmission } from './admission-gate.js';
import { Patch } from './releases/patches.js';
import { POLICY_VERSION, QID, STATUS, SUCCESSES, TURN } from '../temporal/search-attributes.js';
import { trajectoryFailure } from './trajectory-failure.js';
import { stateQuery } from './trajectory-state.js';
const retry = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' };
// The CPU steps (milliseconds each; a verifier check has a 3 s budget) run as local activities: in the worker
// that runs this workflow, recorded as one marker event each, with no task queue round trip. What cannot succeed
// fails typed and non-retryable; a lost connection is retried for as long as it takes. Every step is idempotent,
// so running one again after a crash is harmless.
const cpu = proxyLocalActivities({ startToCloseTimeout: '20s', retry });
// A finished trajectory is never given up: persisting retries until Postgres takes it (or rejects it for good).
const store = proxyLocalActivities({ startToCloseTimeout: '30s', retry });
// A code answer runs its tests in a sandbox: up to a minute for all of them (RATCHET_CODE_ANSWER_TIMEOUT_S).
const sandboxed = proxyLocalActivities({ startToCloseTimeout: '120s', retry });
// Recording a failure is a regular activity: it must happen even while the workflow is being cancelled.
const failures = proxyActivities({ taskQueue: CPU_TASK_QUEUE, startToCloseTimeout: '30s', retry });
/**
 * One trajectory: an episode of up to N turns in its environment (math, code, a tool or a game), each turn generated
 * on the GPU queue and answered by the environment with observations and a reward.
 * `continued` is set when a queued trajectory continued as new to keep its history short.
 */
export async function trajectory(input, continued) {
    if (!patched(Patch.LocalSteps)) {
        // Runs started by releases 1 and 2 finish as they started; the module is evaluated only for them.
        const { releaseTwoTrajectory } = await import(/* webpackMode: "eager" */ './releases/release-two.js');
        return releaseTwoTrajectory(input, continued);
    }
    const checked = await cpu.checkRequest({ request: input, workflowId: workflowInfo().workflowId });
    if ('invalid' in checked)
        return rejectInvalid(input, ApplicationFailure.nonRetryable(checked.invalid, FailureType.InvalidRequest));
    const request = input;
    const { options, timeouts } = checked;
    // Options an earlier release resolved hold only the temperature; the seed's values fill the rest.
    const sampling = samplingOf(options);
    // Release 5: each turn after the first goes to the server that generated the one before (src/workflows/turn-affinity.ts).
    const affinity = patched(Patch.TurnAffinity);
    const onServer = affinity && options.turnAffinity !== false ? turnGenerator(timeouts) : undefined;
    let previousQueue;
    // Generation is long and runs on the GPU queue; the heartbeat timeout is how fast a dead GPU worker is noticed.
    const gpu = proxyActivities({
        taskQueue: GPU_TASK_QUEUE,
        startToCloseTimeout: `${timeouts.generateStartToCloseSeconds}s`,
        heartbeatTimeout: `${timeouts.generateHeartbeatSeconds}s`,
        retry: { ...retry, maximumAttempts: 20 },
    });
    // Release 5: the episode runs in the environment the request names (checked once, at the run's start).
    const environment = patched(Patch.Environments) && checked.environment ? episodeEnvironment(request, checked.environment, options, timeouts) : undefined;
    const identity = {
        trajectoryId: request.trajectoryId, qid: request.qid, taskId: request.taskId, birthTime: Date.now(), layout: options.layout,
        ...(environment ? { environment: checked.environment.name } : {}),
    };
    const turns = [];
    const state = { phase: 'tokenizing', turn: 0, turns: options.turns, verdicts: [], lastAnswerTail: null, lastPredicted: null, policyVersion: null };
    setHandler(stateQuery, () => state);
    // The details (not history) say what the trajectory is and link to its page, however the workflow was started.
    const header = detailsHeader(request, checked.page);
    setCurrentDetails(header);
    // Ratchet's client sets these when it starts the workflow; a workflow started any other way sets them itself.
    if (workflowInfo().typedSearchAttributes.get(QID) !== request.qid) {
        upsertSearchAttributes([{ key: QID, value: request.qid }, { key: STATUS, value: request.group ? 'queued' : 'running' }]);
    }
    let endReason = 'turns';
    try {
        if (request.group) {
            state.phase = 'queued';
            const group = request.group;
            const admission = await awaitAdmission(() => cpu.joinGroupForAdmission({ trajectoryId: request.trajectoryId, qid: request.qid, group }), recheckSchedule(timeouts), continued);
            if (admission !== 'admitted')
                return await continueAsNew(request, admission.continueFrom);
            // A trajectory is born when it may start generating, not when it was queued.
            identity.birthTime = Date.now();
            state.phase = 'tokenizing';
            upsertSearchAttributes([{ key: STATUS, value: 'running' }]);
        }
        let { promptLen: contextLen, state: environmentState } = environment
            ? await environment.start()
            : await cpu.tokenizePrompt({ trajectoryId: request.trajectoryId, problem: request.problem, code: request.code !== undefined });
        for (let turn = 0; turn < options.turns; turn++) {
            Object.assign(state, { phase: 'generating', turn });
            // `temperature` too: a GPU worker of an earlier release reads only that.
            const generateInput = {
                trajectoryId: request.trajectoryId, turn, contextLen, maxNewTokens: options.maxNewTokens, temperature: sampling.temperature, sampling,
            };
            const output = onServer ? await onServer(generateInput, previousQueue) : await gpu.generate(generateInput);
            previousQueue = output.affinityQueue;
            if (output.contextExhausted) {
                if (turns.length === 0)
                    throw ApplicationFailure.nonRetryable(`the prompt of ${request.trajectoryId} fills the context window`, FailureType.ContextExhausted);
                endReason = 'context_exhausted';
                break;
            }
            state.phase = 'verifying';
            const step = environment ? await environment.step(turn, output.finishReason, environmentState) : await (request.code ? sandboxed : cpu).environmentStep({
                trajectoryId: request.trajectoryId, turn, gold: request.gold, outputHadEos: !stoppedWithoutEos(output.finishReason),
                extraction: options.answerExtraction, ...(request.code ? { code: request.code } : {}),
            });
            environmentState = step.state;
            turns.push({
                turn, contextLen, ...output, verdict: step.status, success: step.success, feedbackLen: step.feedbackLen,
                ...(environment ? { reward: step.reward, done: step.done } : {}),
            });
            contextLen += output.outputLen + step.feedbackLen;
            Object.assign(state, { turn: turns.length, verdicts: turns.map((t) => t.verdict), lastAnswerTail: step.answerTail, lastPredicted: step.predicted, policyVersion: output.versionEnd });
            reportProgress(header, turns, options.turns);
            if (environment && step.done) {
                endReason = 'done';
                break;
            }
            if (options.earlyStop && step.success) {
                endReason = 'early_stop';
                break;
            }
        }
        const { rawRewards, rewards } = shapedRewards(turns, options);
        state.phase = 'persisting';
        const persist = () => store.persistTrajectory({ ...identity, endReason, turns, rewards, rawRewards, sampling });
        await (patched(Patch.StoredOutcome) ? CancellationScope.nonCancellable(persist) : persist());
        return completed(request, options.layout, endReason, turns, rewards, state);
    }
    catch (error) {
        if (error instanceof ContinueAsNew)
            throw error;
        let failure = trajectoryFailure(error);
        // Record the failure as a failure (never as a zero reward), even when the workflow is being cancelled.
        const recorded = await recordFailure(identity, turns, failure);
        if (patched(Patch.StoredOutcome)) {
            // One truth: the row an earlier run of a step stored first is how this trajectory ended (RE-RUNS.md).
            if (recorded.existing === 'completed')
                return completed(request, options.layout, endReason, turns, shapedRewards(turns, options).rewards, state);
            if (recorded.existing === 'failed' && recorded.failureType)
                failure = { ...failure, failureType: recorded.failureType, failureClass: recorded.failureClass ?? failure.failureClass };
        }
        upsertSearchAttributes([{ key: STATUS, value: 'failed' }, ...progressAttributes(turns)]);
        state.phase = 'failed';
        if (isCancellation(error))
            throw error;
        throw failedTrajectory(request.trajectoryId, state.turn, turns, failure);
    }
}
/** The stored trajectory's result, as the workflow returns it and `RolloutClient` reads it. */
function completed(request, layout, endReason, turns, rewards, state) {
    state.phase = 'completed';
    upsertSearchAttributes([{ key: STATUS, value: 'completed' }, ...progressAttributes(turns)]);
    return { trajectoryId: request.trajectoryId, qid: request.qid, status: 'completed', endReason, layout, turns, rewards, outputTokens: sumOutput(turns) };
}
function shapedRewards(turns, options) {
    // Release 5 keeps the environment's reward with each turn; earlier turns were ±1 by success (the same values for math).
    const rawRewards = turns.map((t) => (t.reward === undefined
        ? shapeReward(t.success, options.rewardBias, options.rewardScaling)
        : shapeEnvironmentReward(t.reward, options.rewardBias, options.rewardScaling)));
    return { rawRewards, rewards: returnsToGo(rawRewards, options.discount) };
}
/**
 * An invalid request still leaves a `failed` row, under the workflow id, so nothing submitted goes unaccounted; a
 * valid group section in it is passed along, so the member still counts in its group and its siblings can run.
 * (Only the activity's input changes, which replay does not compare: no patch needed.)
 */
async function rejectInvalid(input, invalid) {
    const { qid, group } = (input ?? {});
    const trajectoryId = workflowInfo().workflowId;
    const failure = trajectoryFailure(invalid);
    await recordFailure({ trajectoryId, qid: typeof qid === 'string' ? qid : '', birthTime: Date.now(), layout: 'seed' }, [], failure, group);
    upsertSearchAttributes([{ key: STATUS, value: 'failed' }]);
    throw failedTrajectory(trajectoryId, 0, [], failure);
}
async function recordFailure(identity, turns, failure, unjoinedGroup) {
    return CancellationScope.nonCancellable(() => failures.persistFailure({
        ...identity, turnsDone: turns.length, error: failure.message, failureType: failure.failureType, failureClass: failure.failureClass,
        ...(unjoinedGroup === undefined ? {} : { unjoinedGroup }),
    }));
}
/** The workflow's own failure: typed `TrajectoryFailed`, with the finished turns and the cause's type and class. */
function failedTrajectory(trajectoryId, turn, turns, failure) {
    return ApplicationFailure.nonRetryable(`trajectory ${trajectoryId} failed at turn ${turn}: ${failure.message}`, 'TrajectoryFailed', { turns, failureType: failure.failureType, failureClass: failure.failureClass });
}
function recheckSchedule(timeouts) {
    return { firstSeconds: timeouts.admissionRecheckSeconds, maxSeconds: timeouts.admissionRecheckMaxSeconds, perRun: timeouts.admissionRechecksPerRun };
}
/**
 * Live progress goes to the workflow's details and the `state` query, which cost no history event. The search
 * attributes are written once, when the trajectory ends (release 2 upserted them every turn: each upsert is a
 * history event and a visibility write, the largest per-turn cost the server had left).
 */
function reportProgress(header, turns, total) {
    const successes = turns.filter((t) => t.success).length;
    setCurrentDetails(`${header}\n\nturn ${turns.length}/${total}: ${turns.map((t) => t.verdict).join(', ')} (${successes} correct), policy version ${turns[turns.length - 1].versionEnd}`);
}
function detailsHeader(request, page) {
    const problem = request.problem.length > 120 ? `${request.problem.slice(0, 120)}…` : request.problem;
    return `${request.qid}: ${problem}${page ? `\n\n[Ratchet trajectory page](${page})` : ''}`;
}
/** `RatchetTurn` is the number of turns done, as the details count them (release 2 wrote the last turn's index). */
function progressAttributes(turns) {
    if (turns.length === 0)
        return [];
    return [
        { key: TURN, value: turns.length }, { key: SUCCESSES, value: turns.filter((t) => t.success).length },
        { key: POLICY_VERSION, value: turns[turns.length - 1].versionEnd },
    ];
}
function sumOutput(turns) {
    return turns.reduce((sum, t) => sum + t.outputLen, 0);
}
//# sourceMappingURL=trajectory.js.map