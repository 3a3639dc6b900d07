import { ApplicationFailure, CancellationScope, ContinueAsNew, continueAsNew, isCancellation, patched, proxyActivities, setCurrentDetails, setHandler, upsertSearchAttributes, workflowInfo, } from '@temporalio/workflow';
import { resolveRolloutOptions } from '../../trajectory/options.js';
import { validateTrajectoryRequest } from '../../trajectory/request.js';
import { returnsToGo, shapeReward } from '../../trajectory/rewards.js';
import { resolveTrajectoryTimeouts } from '../../trajectory/timeouts.js';
import { stoppedWithoutEos } from '../../trajectory/turn.js';
import { FailureType } from '../../trajectory/failure.js';
import { CPU_TASK_QUEUE, GPU_TASK_QUEUE } from '../../task-queues.js';
import { awaitAdmission } from '../admission-gate.js';
import { Patch } from './patches.js';
import { POLICY_VERSION, QID, STATUS, SUCCESSES, TURN } from '../../temporal/search-attributes.js';
import { trajectoryFailure } from '../trajectory-failure.js';
import { stateQuery } from '../trajectory-state.js';
const retry = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' };
// Quick CPU work (milliseconds; a verifier check has a 3 s budget). What cannot succeed fails typed and
// non-retryable (a rejected row, a verifier error); what is left is a lost connection or worker, retried for as
// long as it takes: a Postgres outage delays, it never fails. The start-to-close timeout is how soon a killed CPU
// worker's tasks move to another worker, so it is short: a retry is harmless, every step is idempotent.
const cpu = proxyActivities({ taskQueue: CPU_TASK_QUEUE, startToCloseTimeout: '20s', retry });
// A finished trajectory is never given up: persisting retries until Postgres takes it (or rejects it for good).
const store = proxyActivities({ taskQueue: CPU_TASK_QUEUE, startToCloseTimeout: '30s', retry });
/**
 * The trajectory workflow as releases 1 and 2 ran it, frozen: runs started by those releases replay and finish
 * here. Loaded only for them (an eager dynamic import from `trajectory`), so that new runs never evaluate its
 * imports, zod among them, whose per-workflow module set-up was the largest CPU cost of the workflow thread.
 * Never edit it: change `trajectory.ts` behind a new patch instead.
 */
export async function releaseTwoTrajectory(input, continued) {
    const checked = checkRequest(input);
    if ('invalid' in checked)
        return rejectInvalid(input, checked.invalid);
    const { request, options } = checked;
    // Generation is long and runs on the GPU queue; the heartbeat timeout is how fast a dead GPU worker is noticed.
    const timeouts = resolveTrajectoryTimeouts(request.timeouts);
    const gpu = proxyActivities({
        taskQueue: GPU_TASK_QUEUE,
        startToCloseTimeout: `${timeouts.generateStartToCloseSeconds}s`,
        heartbeatTimeout: `${timeouts.generateHeartbeatSeconds}s`,
        retry: { ...retry, maximumAttempts: 20 },
    });
    const identity = { trajectoryId: request.trajectoryId, qid: request.qid, taskId: request.taskId, birthTime: Date.now(), layout: options.layout };
    const turns = [];
    const state = { phase: 'tokenizing', turn: 0, turns: options.turns, verdicts: [], lastAnswerTail: null, lastPredicted: null, policyVersion: null };
    setHandler(stateQuery, () => state);
    upsertSearchAttributes([{ key: QID, value: request.qid }, { key: STATUS, value: request.group ? 'queued' : 'running' }]);
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
        let { promptLen: contextLen } = await cpu.tokenizePrompt({ trajectoryId: request.trajectoryId, problem: request.problem });
        for (let turn = 0; turn < options.turns; turn++) {
            Object.assign(state, { phase: 'generating', turn });
            const output = await gpu.generate({ trajectoryId: request.trajectoryId, turn, contextLen, maxNewTokens: options.maxNewTokens, temperature: options.temperature });
            if (output.contextExhausted) {
                if (turns.length === 0)
                    throw ApplicationFailure.nonRetryable(`the prompt of ${request.trajectoryId} fills the context window`, FailureType.ContextExhausted);
                endReason = 'context_exhausted';
                break;
            }
            state.phase = 'verifying';
            const verdict = await cpu.verify({ trajectoryId: request.trajectoryId, turn, gold: request.gold });
            state.phase = 'feedback';
            const feedback = await cpu.appendFeedback({ trajectoryId: request.trajectoryId, turn, success: verdict.success, outputHadEos: !stoppedWithoutEos(output.finishReason) });
            turns.push({ turn, contextLen, ...output, verdict: verdict.status, success: verdict.success, feedbackLen: feedback.feedbackLen });
            contextLen += output.outputLen + feedback.feedbackLen;
            Object.assign(state, { verdicts: turns.map((t) => t.verdict), lastAnswerTail: verdict.answerTail, lastPredicted: verdict.predicted, policyVersion: output.versionEnd });
            reportProgress(turns, options.turns);
            if (options.earlyStop && verdict.success) {
                endReason = 'early_stop';
                break;
            }
        }
        const rawRewards = turns.map((t) => shapeReward(t.success, options.rewardBias, options.rewardScaling));
        const rewards = returnsToGo(rawRewards, options.discount);
        state.phase = 'persisting';
        await store.persistTrajectory({ ...identity, endReason, turns, rewards, rawRewards });
        state.phase = 'completed';
        upsertSearchAttributes([{ key: STATUS, value: 'completed' }]);
        return { trajectoryId: request.trajectoryId, qid: request.qid, status: 'completed', endReason, layout: options.layout, turns, rewards, outputTokens: sumOutput(turns) };
    }
    catch (error) {
        if (error instanceof ContinueAsNew)
            throw error;
        const failure = trajectoryFailure(error);
        // Record the failure as a failure (never as a zero reward), even when the workflow is being cancelled.
        await recordFailure(identity, turns, failure);
        state.phase = 'failed';
        if (isCancellation(error))
            throw error;
        throw failedTrajectory(request.trajectoryId, state.turn, turns, failure);
    }
}
/**
 * Release 1 checked only the rollout options, and failed before recording anything; later releases check the
 * whole request against its schema and record the rejection. Histories of release 1 replay the old way.
 */
function checkRequest(input) {
    if (!patched(Patch.RequestSchema))
        return { request: input, options: releaseOneOptions(input) };
    try {
        const request = validateTrajectoryRequest(input);
        // Rows, groups and the controller's signals all find a trajectory by its id: it must be the workflow's.
        if (request.trajectoryId !== workflowInfo().workflowId) {
            throw new Error(`trajectoryId: "${request.trajectoryId}" must equal the workflow id "${workflowInfo().workflowId}"`);
        }
        return { request, options: resolveRolloutOptions(request.options) };
    }
    catch (error) {
        return { invalid: ApplicationFailure.nonRetryable(error.message, FailureType.InvalidRequest) };
    }
}
function releaseOneOptions(request) {
    try {
        return resolveRolloutOptions(request.options);
    }
    catch (error) {
        throw ApplicationFailure.nonRetryable(error.message, FailureType.InvalidRolloutOptions);
    }
}
/** An invalid request still leaves a `failed` row, under the workflow id, so nothing submitted goes unaccounted. */
async function rejectInvalid(input, invalid) {
    const qid = input?.qid;
    const trajectoryId = workflowInfo().workflowId;
    const failure = trajectoryFailure(invalid);
    await recordFailure({ trajectoryId, qid: typeof qid === 'string' ? qid : '', birthTime: Date.now(), layout: 'seed' }, [], failure);
    throw failedTrajectory(trajectoryId, 0, [], failure);
}
async function recordFailure(identity, turns, failure) {
    await CancellationScope.nonCancellable(() => store.persistFailure({
        ...identity, turnsDone: turns.length, error: failure.message, failureType: failure.failureType, failureClass: failure.failureClass,
    }));
    upsertSearchAttributes([{ key: STATUS, value: 'failed' }]);
}
/** The workflow's own failure: typed `TrajectoryFailed`, with the finished turns and the cause's type and class. */
function failedTrajectory(trajectoryId, turn, turns, failure) {
    return ApplicationFailure.nonRetryable(`trajectory ${trajectoryId} failed at turn ${turn}: ${failure.message}`, 'TrajectoryFailed', { turns, failureType: failure.failureType, failureClass: failure.failureClass });
}
function recheckSchedule(timeouts) {
    return { firstSeconds: timeouts.admissionRecheckSeconds, maxSeconds: timeouts.admissionRecheckMaxSeconds, perRun: timeouts.admissionRechecksPerRun };
}
function reportProgress(turns, total) {
    const last = turns[turns.length - 1];
    const successes = turns.filter((t) => t.success).length;
    upsertSearchAttributes([{ key: TURN, value: last.turn }, { key: SUCCESSES, value: successes }, { key: POLICY_VERSION, value: last.versionEnd }]);
    setCurrentDetails(`turn ${last.turn + 1}/${total}: ${turns.map((t) => t.verdict).join(', ')} (${successes} correct), policy version ${last.versionEnd}`);
}
function sumOutput(turns) {
    return turns.reduce((sum, t) => sum + t.outputLen, 0);
}
//# sourceMappingURL=release-two.js.map