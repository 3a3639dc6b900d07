/** The command line itself is wrong (a missing or conflicting flag): exit status 2, like commander's own. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
