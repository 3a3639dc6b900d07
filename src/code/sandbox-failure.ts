/**
 * The sandbox could not run an answer (bwrap or unshare missing or refused, Python absent, the harness dead
 * before it was ready). An infrastructure failure: never a verdict, never a zero reward. Retrying on another
 * worker may help.
 */
export class SandboxFailure extends Error {
  override readonly name = 'SandboxFailure';

  constructor(message: string, options?: { cause?: unknown }) {
    super(`Code sandbox failed: ${message}`, options);
  }
}
