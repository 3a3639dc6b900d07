import { ApplicationFailure, CancellationScope, isCancellation, proxyActivities, setCurrentDetails, setHandler, upsertSearchAttributes, } from '@temporalio/workflow';
import { resolveRolloutOptions } from '../trajectory/options.js';
import { returnsToGo, shapeReward } from '../trajectory/rewards.js';
import { stoppedWithoutEos } from '../trajectory/turn.js';
import { CPU_TASK_QUEUE, GPU_TASK_QUEUE } from '../task-queues.js';
import { awaitAdmission } from './admission-gate.js';
import { POLICY_VERSION, QID, STATUS, SUCCESSES, TURN } from './search-attributes.js';
import { stateQuery } from './trajectory-state.js';
const retry = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' };
// Quick CPU work. Twenty attempts ride out a Postgres restart of several minutes before the trajectory fails.
const cpu = proxyActivities({ taskQueue: CPU_TASK_QUEUE, startToCloseTimeout: '1m', retry: { ...retry, maximumAttempts: 20 } });
// A finished trajectory is never given up: persisting retries until Postgres takes it.
const store = proxyActivities({ taskQueue: CPU_TASK_QUEUE, startToCloseTimeout: '2m', retry });
/** One trajectory: a math problem answered for up to N turns, each verified and answered with feedback. */
export async function trajectory(request) {
    const options = validOptions(request);
    // Generation is long and runs on the GPU queue; the heartbeat timeout is how fast a dead GPU worker is noticed.
    const gpu = proxyActivities({
        taskQueue: GPU_TASK_QUEUE,
        startToCloseTimeout: `${request.timeouts?.generateStartToCloseSeconds ?? 1800}s`,
        heartbeatTimeout: `${request.timeouts?.generateHeartbeatSeconds ?? 20}s`,
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
            await awaitAdmission(() => cpu.joinGroupForAdmission({ trajectoryId: request.trajectoryId, qid: request.qid, group }), request.timeouts?.admissionRecheckSeconds ?? 60);
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
                    throw ApplicationFailure.nonRetryable(`the prompt of ${request.trajectoryId} fills the context window`, 'ContextExhausted');
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
        // Record the failure as a failure (never as a zero reward), even when the workflow is being cancelled.
        const message = describe(error);
        await CancellationScope.nonCancellable(() => store.persistFailure({ ...identity, turnsDone: turns.length, error: message }));
        state.phase = 'failed';
        upsertSearchAttributes([{ key: STATUS, value: 'failed' }]);
        if (isCancellation(error))
            throw error;
        throw ApplicationFailure.nonRetryable(`trajectory ${request.trajectoryId} failed at turn ${state.turn}: ${message}`, 'TrajectoryFailed', { turns });
    }
}
function validOptions(request) {
    try {
        return resolveRolloutOptions(request.options);
    }
    catch (error) {
        // A plain Error would fail the workflow task and be retried forever; bad input fails the workflow once.
        throw ApplicationFailure.nonRetryable(error.message, 'InvalidRolloutOptions');
    }
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
function describe(error) {
    const causes = [];
    for (let e = error; e; e = e.cause)
        causes.push(e.message ?? String(e));
    return causes.filter(Boolean).join(': ');
}
