/** One problem of the project's sample code dataset: a reference solution and the test inputs. */
export interface SampleCodeProblem {
  id: string;
  prompt: string;
  /** The reference solution; the expected outputs are what it prints (or returns) for each input. */
  solution: string;
  inputs: string[];
  /** Set for LeetCode-style problems: the method of `class Solution` to call. */
  fnName?: string;
}
