/**
 * Why an agent's chat completions request is refused:
 * - `invalid-request`: not the shape of a chat completions request (a field missing or of the wrong type);
 * - `unknown-field`: a field this endpoint does not know. Refused rather than dropped: an unknown field may change the
 *   sampling (a server's `typical_p`, say), and a turn must never be generated under terms nobody recorded;
 * - `unsupported-field`: a known feature the trajectory cannot honour token-exactly (`n > 1`, `stop`, a forced tool
 *   choice, JSON output, audio);
 * - `unsupported-content`: a content part other than text (an image, audio, a file): the policy reads text tokens;
 * - `sampling-mismatch`: a sampling field that differs from the trajectory's. The trajectory's sampling is the run's
 *   and its behaviour logprobs are of that distribution, so a different one is refused, never silently overridden;
 * - `over-budget`: more new tokens than the trajectory's per-turn budget;
 * - `invalid-tool-arguments`: an assistant tool call whose `function.arguments` is not a JSON object;
 * - `invalid-tools`: tools that cannot be offered (a duplicate name, an unreadable JSON Schema).
 */
export type AgentRequestProblem =
  | 'invalid-request'
  | 'unknown-field'
  | 'unsupported-field'
  | 'unsupported-content'
  | 'sampling-mismatch'
  | 'over-budget'
  | 'invalid-tool-arguments'
  | 'invalid-tools';

/**
 * A chat completions request from an agent program that is refused before any turn is generated. The program's bug
 * (or a feature the trajectory cannot serve), so retrying the same request cannot help: an endpoint answers it as an
 * HTTP 400 with `kind` and `field`, in OpenAI's error shape.
 */
export class AgentRequestError extends Error {
  override readonly name = 'AgentRequestError';

  constructor(
    readonly kind: AgentRequestProblem,
    /** The field at fault, as a path into the request body: `messages[2].content[0].type`, `temperature`. */
    readonly field: string,
    reason: string,
  ) {
    super(`${field}: ${reason}`);
  }
}
