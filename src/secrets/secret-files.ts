import { readFileSync } from 'node:fs';

/** Variables that may be given as `<NAME>_FILE`, a file holding the value (Docker and Compose secrets). */
const FILE_VARIABLES = ['TEMPORAL_API_KEY', 'RATCHET_POLICY_API_KEY', 'DATABASE_URL'];

/**
 * The environment with every `<NAME>_FILE` read into `<NAME>` (unless `<NAME>` is set too), and
 * `DATABASE_PASSWORD_FILE`'s password put into DATABASE_URL: a compose file names the secret's path, so no
 * password is written into it or shown by `docker inspect`.
 */
export function withSecretFiles(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const name of FILE_VARIABLES) {
    const file = env[`${name}_FILE`];
    if (file && !env[name]) out[name] = readSecret(`${name}_FILE`, file);
  }
  const passwordFile = env['DATABASE_PASSWORD_FILE'];
  if (passwordFile && out['DATABASE_URL']) {
    const url = new URL(out['DATABASE_URL']);
    // Encoded by hand: the URL setter leaves `%` as it is, which Postgres clients would then decode.
    url.password = encodeURIComponent(readSecret('DATABASE_PASSWORD_FILE', passwordFile));
    out['DATABASE_URL'] = url.toString();
  }
  return out;
}

function readSecret(variable: string, file: string): string {
  try {
    return readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    throw new Error(`${variable}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}
