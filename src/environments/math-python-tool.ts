import { DEFAULT_MEMORY_MB, runScript, type CodeSandboxPool, type ScriptRun } from '../code/index.js';
import type { AnswerExtraction, Verdict, VerifierPool } from '../verifier/index.js';
import { judgeMathAnswer } from './math-judge.js';
import { EnvironmentFailure, type Environment, type EnvironmentTask, type JsonValue, type StepResult, type TurnAction } from './environment.js';

/** What the `math-python-tool` environment runs on, and its limits. */
export interface MathPythonToolDeps {
  /** Judges the final answer against the task's gold. */
  verifier: VerifierPool;
  /** Runs the model's programs, under the same isolation as code answers. */
  sandbox: CodeSandboxPool;
  /** Where the final answer is found when the task does not say (its `answerExtraction`, the run's); default: the verifier pool's. */
  extraction?: AnswerExtraction;
  /** Wall-clock limit of one program, in seconds; default 5. */
  timeoutS?: number;
  /** Memory of one program's processes together, in MB; default the code sandbox's (512). */
  memoryMb?: number;
  /** Longest tool observation, in characters; a longer one keeps its head and tail around a marker. Default 2,000. */
  maxObservationChars?: number;
}

export const MATH_PYTHON_TOOL = 'math-python-tool';
export const DEFAULT_TOOL_TIMEOUT_S = 5;
export const DEFAULT_MAX_OBSERVATION_CHARS = 2000;
/** A traceback's last lines are what the model needs: where it failed and why. */
const STDERR_LINES = 20;

export const TOOL_INSTRUCTION =
  'You may use Python to compute: write a program in a ```python code block and it will be run, with what it prints ' +
  'sent back to you (only the last ```python block of a reply is run). When you are done, put your final answer in \\boxed{}.';

export const FORMAT_REMINDER =
  'Your reply had neither a ```python code block to run nor a final answer. Write a program in a ```python block to ' +
  'compute, or put your final answer in \\boxed{}.';

/**
 * Tool-integrated reasoning: each turn either states the final answer (judged by the verifier against the gold:
 * +1 correct, −1 otherwise, the episode ends), or runs its last ```python block in the code sandbox (reward 0;
 * what the program printed comes back as a `tool` message), or does neither (`no_answer`, −1, a reminder of the
 * format). A turn that has both a program and a `\boxed{}` answer outside it is final. Nothing a program prints
 * can change a verdict: the turn's verdict is read from the model's own text, the run's outcome from the sandbox
 * (exit status, kills), and the program's output is only the observation's text.
 */
export function mathPythonToolEnvironment(deps: MathPythonToolDeps): Environment {
  const limits = { timeoutS: deps.timeoutS ?? DEFAULT_TOOL_TIMEOUT_S, memoryMb: deps.memoryMb ?? DEFAULT_MEMORY_MB };
  const maxChars = deps.maxObservationChars ?? DEFAULT_MAX_OBSERVATION_CHARS;
  if (!(limits.timeoutS > 0) || !(limits.memoryMb > 0) || !(maxChars >= 100)) {
    throw new RangeError(`math-python-tool needs positive limits and room for an observation, got ${JSON.stringify({ ...limits, maxChars })}`);
  }

  /** The verdict of a stated answer, by the one math rule (src/environments/math-judge.ts). */
  const judge = (task: EnvironmentTask, action: TurnAction, text: string): Promise<Verdict> => {
    const extraction = task.answerExtraction ?? deps.extraction;
    return judgeMathAnswer(
      deps.verifier,
      { trajectoryId: task.trajectoryId, turn: action.turn, gold: task.gold, text, attempt: action.attempt },
      extraction ? { extraction } : {},
    );
  };

  return {
    name: MATH_PYTHON_TOOL,
    slowSteps: true,

    reset(task) {
      return Promise.resolve({ messages: [{ role: 'user', content: `${task.problem}\n\n${TOOL_INSTRUCTION}` }] });
    },

    async step(task: EnvironmentTask, action: TurnAction): Promise<StepResult> {
      const { code, prose } = pythonBlocks(action.text);
      // A box outside the programs is a final answer even beside a program; without a program, any stated answer is.
      if (code === null || BOX.test(prose)) {
        const verdict = await judge(task, action, prose);
        if (verdict.status !== 'no_answer') return finalAnswer(verdict);
      }
      if (code !== null) return toolCall(await runScript(deps.sandbox, code, limits), code, limits.timeoutS, maxChars);
      return {
        observations: [{ role: 'user', content: FORMAT_REMINDER }],
        reward: -1,
        success: false,
        done: false,
        verdict: 'no_answer',
        predicted: null,
        detail: 'no ```python block and no final answer',
      };
    },
  };
}

function finalAnswer(verdict: Verdict): StepResult {
  return {
    observations: [],
    reward: verdict.equal ? 1 : -1,
    success: verdict.equal,
    done: true,
    verdict: verdict.status,
    predicted: verdict.predicted,
    ...(verdict.detail === undefined ? {} : { detail: verdict.detail }),
  };
}

function toolCall(run: ScriptRun, code: string, timeoutS: number, maxChars: number): StepResult {
  const status = runStatus(run, timeoutS);
  const full = [run.stdout.trimEnd(), stderrTail(run.stderr), status ?? ''].filter((part) => part !== '').join('\n') || '(no output)';
  const content = bounded(full, maxChars);
  const info: { [key: string]: JsonValue } = {
    outcome: run.outcome,
    exitCode: run.exitCode,
    signal: run.signal,
    timedOut: run.outcome === 'timeout',
    stdoutChars: run.stdout.length,
    stderrChars: run.stderr.length,
    outputChars: full.length,
    truncated: content.length < full.length,
  };
  return {
    observations: [{ role: 'tool', content }],
    reward: 0,
    success: false,
    done: false,
    verdict: 'tool_call',
    predicted: code,
    detail: status ?? 'the program ran to its end',
    info,
  };
}

/** The line that says how a program that did not simply finish ended; null when it exited with status 0. */
function runStatus(run: ScriptRun, timeoutS: number): string | null {
  switch (run.outcome) {
    case 'timeout':
      return `Timed out: the program ran past its ${timeoutS} s limit and was stopped.`;
    case 'output_limit':
      return 'Stopped: the program printed more than the output limit (its output is lost).';
    case 'memory_limit':
      return 'Stopped: the program used more than its memory limit.';
    case 'exited':
      if (run.signal !== null) return `The program was killed by ${run.signal}.`;
      // A traceback says enough; a silent failure gets its status.
      return run.exitCode === 0 || run.stderr.trim() !== '' ? null : `The program exited with status ${run.exitCode}.`;
  }
}

/** The last lines of stderr, without the sandbox launcher's own frames at the top of a traceback (they come first). */
function stderrTail(stderr: string): string {
  const lines: string[] = [];
  let afterHeader = false;
  for (const line of stderr.trimEnd().split('\n')) {
    if (afterHeader && LAUNCHER_FRAME.test(line)) continue;
    afterHeader = line === 'Traceback (most recent call last):';
    lines.push(line);
  }
  const tail = lines.slice(-STDERR_LINES).join('\n');
  return tail.trim() === '' ? '' : tail;
}

const LAUNCHER_FRAME = /^ {2}File "<string>", line \d+, in (?:<module>|run_main)$/;

/** `text` if it fits in `max` characters, else its head and tail around a marker saying how much was cut. */
export function bounded(text: string, max: number): string {
  if (text.length <= max) return text;
  const marker = (cut: number): string => `\n…[${cut} characters cut]…\n`;
  const room = max - marker(text.length).length;
  const head = codePointBoundary(text, Math.ceil(room / 2));
  const tail = codePointBoundary(text, text.length - Math.floor(room / 2));
  return `${text.slice(0, head)}${marker(tail - head)}${text.slice(tail)}`;
}

/** `at`, moved back one place when it would split a surrogate pair. */
function codePointBoundary(text: string, at: number): number {
  const code = text.charCodeAt(at);
  return code >= 0xdc00 && code <= 0xdfff && at > 0 ? at - 1 : at;
}

const FENCE = /```([^\n`]*)\n([\s\S]*?)```/g;
const PYTHON_TAGS = new Set(['python', 'python3', 'py']);
/** A `\boxed{…}` / `\fbox{…}` (or `\boxed 5`), as the verifier reads boxes. */
const BOX = /\\(?:boxed|fbox)\s*\{|\\boxed\s+[^\s${}\\]/;

/** The reply's last non-empty ```python block (null when none), and the reply with every ```python block taken out. */
export function pythonBlocks(text: string): { code: string | null; prose: string } {
  let code: string | null = null;
  const prose = text.replace(FENCE, (block, tag: string, body: string) => {
    if (!PYTHON_TAGS.has(tag.trim().toLowerCase())) return block;
    if (body.trim() !== '') code = body.replace(/\s+$/, '');
    return '\n\n';
  });
  return { code, prose };
}
