import pg from 'pg';

/**
 * SQLSTATE classes whose errors a retry cannot fix: the same statement with the same values fails again.
 * 22 data exception (a NUL byte in text, invalid input syntax), 23 integrity constraint violation,
 * 42 syntax error or access rule violation, 54 program limit exceeded (a row or an array too large).
 */
const PERMANENT_CLASSES: ReadonlySet<string> = new Set(['22', '23', '42', '54']);

/**
 * SQLSTATEs that say the server or the connection went away or lost a race, not that the statement is wrong:
 * 08 connection exception, 53 insufficient resources, 57P01-57P03 shutdown / cannot connect now,
 * 40001 serialization failure, 40P01 deadlock.
 */
const TRANSIENT_CLASSES: ReadonlySet<string> = new Set(['08', '53']);
const TRANSIENT_STATES: ReadonlySet<string> = new Set(['57P01', '57P02', '57P03', '40001', '40P01']);

/** Socket errors of a lost or refused connection (pg passes Node's errors through, with no SQLSTATE). */
const CONNECTION_ERRNOS: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** The SQLSTATE of a Postgres error found on `error` or its causes; undefined when the server never answered. */
export function sqlState(error: unknown): string | undefined {
  return databaseError(error)?.code;
}

/** The server rejected the statement itself: running it again cannot succeed. */
export function isPermanentDatabaseError(error: unknown): boolean {
  const state = sqlState(error);
  return state !== undefined && PERMANENT_CLASSES.has(state.slice(0, 2));
}

/** The connection was lost or refused, or the server is busy: another attempt may well succeed. */
export function isTransientDatabaseError(error: unknown): boolean {
  const state = sqlState(error);
  if (state !== undefined) return TRANSIENT_CLASSES.has(state.slice(0, 2)) || TRANSIENT_STATES.has(state);
  return causes(error).some(
    (e) =>
      CONNECTION_ERRNOS.has(String((e as { code?: unknown }).code)) ||
      // pg's own words when a server closes a connection or a pool cannot get one in time.
      /^Connection terminated|^timeout exceeded when trying to connect|^Client has encountered a connection error/.test((e as Error)?.message ?? ''),
  );
}

function databaseError(error: unknown): pg.DatabaseError | undefined {
  return causes(error).find((e): e is pg.DatabaseError => e instanceof pg.DatabaseError);
}

/** The error and the errors it wraps (`cause`), outermost first; bounded in case of a cycle. */
function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = error; e !== undefined && e !== null && chain.length < 8; e = (e as { cause?: unknown }).cause) chain.push(e);
  return chain;
}
