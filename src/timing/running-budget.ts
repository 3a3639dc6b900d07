/**
 * How late a timer may fire before it says the whole process was frozen (SIGSTOP, a VM migration, a long GC
 * pause) rather than the check running long: a busy event loop delays timers by milliseconds, a stall by seconds.
 */
const STALL_SLACK_MS = 1_000;
/** A process frozen this many times during one check still ends it: a budget never becomes unbounded. */
const MAX_STALLS = 3;

/** A started budget: `cancel` when the work ends first; `stalls` counts the freezes it did not count against it. */
export interface RunningBudget {
  cancel(): void;
  readonly stalls: number;
}

/**
 * Calls `onSpent` once `budgetMs` of the process's running time has passed. A timer that fires well past its
 * deadline means this process was frozen, and the work under the budget (a thread of this process, or a child
 * frozen with it) was frozen too: that time is not the work's, so the budget starts again rather than judging
 * a correct answer a timeout because its worker stalled (a stored verdict is the verdict: it is never re-judged).
 */
export function startRunningBudget(budgetMs: number, onSpent: () => void): RunningBudget {
  let stalls = 0;
  let timer: NodeJS.Timeout;
  const arm = (): void => {
    const deadline = performance.now() + budgetMs;
    timer = setTimeout(() => {
      if (performance.now() - deadline > STALL_SLACK_MS && stalls < MAX_STALLS) {
        stalls++;
        arm();
      } else {
        onSpent();
      }
    }, budgetMs);
  };
  arm();
  return {
    cancel: () => clearTimeout(timer),
    get stalls() {
      return stalls;
    },
  };
}
