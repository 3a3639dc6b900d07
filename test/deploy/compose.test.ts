import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SERVER_CONFIG, TEMPORAL_SERVER_VERSION } from '../../src/stack/temporal-server.js';
import { RATCHET_SEARCH_ATTRIBUTES } from '../../src/temporal/search-attributes.js';

// Static checks of the deployment files: no Docker engine is needed, so they run everywhere.
const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(join(root, path), 'utf8');

type DependsOn = string[] | Record<string, { condition?: string }>;
interface Service {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  entrypoint?: string[] | string;
  environment?: Record<string, string | number | boolean | null>;
  depends_on?: DependsOn;
  volumes?: string[];
  ports?: string[];
  healthcheck?: { test: string[] | string };
  secrets?: string[];
  deploy?: {
    replicas?: number;
    resources?: { reservations?: { devices?: { driver?: string; capabilities?: string[] }[] } };
  };
}

const composeText = read('docker-compose.yml');
const compose = parse(composeText, { merge: true }) as {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
} & Record<string, unknown>;
const services = compose.services;

/** Resolves Compose interpolation the way `docker compose` does with no .env: defaults only. */
function interpolate(value: string): string {
  return value.replace(/\$\$|\$\{([A-Za-z_]\w*)(?::?-([^}]*))?\}/g, (match, name, fallback) => {
    if (match === '$$') return '$';
    if (fallback === undefined) throw new Error(`\${${name}} has no default`);
    return fallback;
  });
}

function service(name: string): Service {
  const found = services[name];
  if (!found) throw new Error(`docker-compose.yml has no service ${name}`);
  return found;
}

function env(name: string, key: string): string {
  const value = service(name).environment?.[key];
  if (value === undefined || value === null) throw new Error(`${name} does not set ${key}`);
  return interpolate(String(value));
}

function argv(value: string[] | string | undefined): string[] {
  if (value === undefined) return [];
  return (typeof value === 'string' ? value.split(/\s+/) : value).map((arg) => interpolate(String(arg)));
}

function flag(args: string[], name: string): string {
  const at = args.indexOf(name);
  if (at < 0 || at + 1 >= args.length) throw new Error(`no ${name} in ${args.join(' ')}`);
  return args[at + 1]!;
}

function dependencies(name: string): Record<string, string | undefined> {
  const deps = service(name).depends_on ?? [];
  if (Array.isArray(deps)) return Object.fromEntries(deps.map((dep) => [dep, undefined]));
  return Object.fromEntries(Object.entries(deps).map(([dep, spec]) => [dep, spec?.condition]));
}

/** The host-side file a bind mount maps onto `containerPath` (or a directory above it). */
function boundFile(name: string, containerPath: string): string {
  for (const volume of service(name).volumes ?? []) {
    const [source, target] = interpolate(volume).split(':');
    if (!source?.startsWith('.') || !target) continue;
    if (containerPath === target || containerPath.startsWith(`${target}/`)) {
      return join(root, source, containerPath.slice(target.length));
    }
  }
  throw new Error(`${name} mounts nothing from the repository at ${containerPath}`);
}

function scriptRunBy(name: string): string {
  const args = [...argv(service(name).entrypoint), ...argv(service(name).command)];
  const script = args.find((arg) => arg.startsWith('/') && /\.(sh|py)$/.test(arg));
  if (!script) throw new Error(`${name} runs no mounted script`);
  return readFileSync(boundFile(name, script), 'utf8');
}

const initScript = read('deploy/postgres/initdb/01-databases.sh');
const createdDatabases = [...initScript.matchAll(/CREATE DATABASE (\w+)/g)].map((m) => m[1]);
const createdRoles = [...initScript.matchAll(/CREATE (?:ROLE|USER) (\w+)/g)].map((m) => m[1]);

const workers = ['ratchet-cpu-worker', 'ratchet-gpu-worker'];
const temporalGrpcPort = Number(env('temporal', 'FRONTEND_GRPC_PORT'));
const sglangArgs = argv(service('sglang').command);

// The custom search attributes Ratchet's workflows upsert, in the CLI's type spelling.
const cliType = (sdkType: string) =>
  sdkType
    .toLowerCase()
    .split('_')
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('');
const searchAttributes: Record<string, string> = Object.fromEntries(RATCHET_SEARCH_ATTRIBUTES.map((key) => [key.name, cliType(key.type)]));

describe('docker-compose.yml', () => {
  it('defines the whole stack as Compose-spec services', () => {
    expect(compose).not.toHaveProperty('version');
    expect(Object.keys(services)).toEqual(
      expect.arrayContaining([
        'postgres',
        'temporal-schema-setup',
        'temporal',
        'temporal-namespace-setup',
        'temporal-ui',
        'sglang',
        'ratchet-cpu-worker',
        'ratchet-gpu-worker',
        'ratchet-controller',
      ]),
    );
  });

  it('runs without a .env: every interpolated variable has a default', () => {
    const variables = [...composeText.matchAll(/(?<!\$)\$\{([^}]*)\}/g)].map((m) => m[1]!);
    expect(variables.length).toBeGreaterThan(0);
    expect(variables.filter((v) => !/^\w+:?-/.test(v))).toEqual([]);
  });

  it('uses no deprecated temporalio/auto-setup image', () => {
    for (const { image } of Object.values(services)) expect(image ?? '').not.toMatch(/auto-setup/);
  });

  it('pins every image to a concrete tag', () => {
    for (const [name, { image, build }] of Object.entries(services)) {
      if (!image) {
        expect(build, `${name} has neither image nor build`).toBeDefined();
        continue;
      }
      const tag = /:([^/:]+)$/.exec(interpolate(image))?.[1];
      expect(tag, `${name}: ${image}`).toBeDefined();
      expect(tag, `${name}: ${image}`).not.toBe('latest');
    }
  });

  it('names only existing services in depends_on', () => {
    for (const name of Object.keys(services)) {
      for (const dep of Object.keys(dependencies(name))) expect(services, `${name} -> ${dep}`).toHaveProperty(dep);
    }
  });

  it('mounts only repository files that exist', () => {
    for (const [name, { volumes }] of Object.entries(services)) {
      for (const volume of volumes ?? []) {
        const source = interpolate(volume).split(':')[0]!;
        if (source.startsWith('.')) expect(existsSync(join(root, source)), `${name}: ${source}`).toBe(true);
        else expect(compose.volumes ?? {}, `${name}: ${source}`).toHaveProperty(source);
      }
    }
  });
});

describe('postgres', () => {
  it('is health-checked with pg_isready and keeps its data in a volume', () => {
    expect(argv(service('postgres').healthcheck?.test)).toContain('pg_isready');
    expect(service('postgres').volumes).toContainEqual(expect.stringMatching(/^[\w-]+:\/var\/lib\/postgresql\/data$/));
  });

  it('creates the temporal, visibility and ratchet databases on first start', () => {
    expect(boundFile('postgres', '/docker-entrypoint-initdb.d/01-databases.sh')).toMatch(/01-databases\.sh$/);
    expect(createdDatabases).toEqual(expect.arrayContaining(['temporal', 'temporal_visibility', 'ratchet']));
  });
});

describe('temporal', () => {
  it('starts only after postgres is healthy and the schema setup has completed', () => {
    expect(dependencies('temporal')).toMatchObject({
      postgres: 'service_healthy',
      'temporal-schema-setup': 'service_completed_successfully',
    });
    expect(dependencies('temporal-schema-setup')).toMatchObject({ postgres: 'service_healthy' });
  });

  it('sets up both stores from the postgres12 schema dirs with admin-tools', () => {
    expect(service('temporal-schema-setup').image).toMatch(/^temporalio\/admin-tools:/);
    const script = scriptRunBy('temporal-schema-setup');
    for (const step of ['create', 'setup-schema -v 0.0', 'update-schema -d']) expect(script).toContain(step);
    expect(script).toContain('temporal-sql-tool');
    expect(script).toContain('/etc/temporal/schema/postgresql/v12');
    expect(script).toMatch(/\/temporal\/versioned/);
    expect(script).toMatch(/\/visibility\/versioned/);
    expect(script).toContain('--plugin postgres12');
    expect(env('temporal-schema-setup', 'DB_HOST')).toBe('postgres');
  });

  it('runs the server version and config the test suite runs (npm run test:temporal-server), on the databases and role the init script creates', () => {
    expect(service('temporal').image).toBe(`temporalio/server:${TEMPORAL_SERVER_VERSION}`);
    for (const tool of ['temporal-schema-setup', 'temporal-namespace-setup'])
      expect(service(tool).image).toBe(`temporalio/admin-tools:${TEMPORAL_SERVER_VERSION}`);
    const start = scriptRunBy('temporal');
    const configPath = /--config-file (\S+)/.exec(start)?.[1];
    expect(configPath, 'the entrypoint starts temporal-server on a mounted config file').toBeDefined();
    expect(boundFile('temporal', configPath!)).toBe(SERVER_CONFIG);
    const config = readFileSync(SERVER_CONFIG, 'utf8');
    expect([...config.matchAll(/databaseName: (\w+)/g)].map((m) => m[1])).toEqual(['temporal', 'temporal_visibility']);
    expect(createdDatabases).toEqual(expect.arrayContaining(['temporal', 'temporal_visibility']));
    expect(services).toHaveProperty(env('temporal', 'DB_HOST'));
    expect(env('temporal', 'DB_PORT')).toBe('5432');
    expect(createdRoles).toContain(env('temporal', 'DB_USER'));
    expect(service('temporal').secrets).toContain('temporal_db_password'); // its DB_PASSWORD, set by the entrypoint wrapper
    expect(start).toMatch(/DB_PASSWORD="\$\(cat \/run\/secrets\/temporal_db_password\)"/);
    expect(env('temporal', 'BIND_ON_IP')).toBe('0.0.0.0');
  });

  it('reads a dynamic config file that the repository mounts', () => {
    const file = boundFile('temporal', env('temporal', 'DYNAMIC_CONFIG_FILE_PATH'));
    expect(parse(readFileSync(file, 'utf8'))).toBeTypeOf('object');
  });

  it('creates the namespace once the server is healthy', () => {
    expect(dependencies('temporal-namespace-setup')).toMatchObject({ temporal: 'service_healthy' });
    expect(scriptRunBy('temporal-namespace-setup')).toContain('temporal operator namespace create');
    expect(env('temporal-namespace-setup', 'TEMPORAL_NAMESPACE')).toBe('default');
  });

  it('registers every search attribute the app uses, with its type', () => {
    expect(searchAttributes).toMatchObject({ RatchetQid: 'Keyword', RatchetTurn: 'Int', RatchetStatus: 'Keyword' });
    const registered = Object.fromEntries(
      env('temporal-namespace-setup', 'RATCHET_SEARCH_ATTRIBUTES')
        .split(',')
        .map((pair) => pair.split('=')),
    );
    expect(registered).toEqual(searchAttributes);
    const script = scriptRunBy('temporal-namespace-setup');
    expect(script).toMatch(/temporal operator search-attribute create[^\n]*\\?\n?[^\n]*--name "\$1" --type "\$2"/);
  });

  it('fits the custom search attributes in the slots Postgres visibility pre-allocates', () => {
    // schema/postgresql/v12/visibility: Int01-03, Keyword01-10.
    const slots: Record<string, number> = { Int: 3, Keyword: 10, Bool: 3, Double: 3, Datetime: 3, Text: 3 };
    const perType = Object.values(searchAttributes).reduce<Record<string, number>>(
      (counts, type) => ({ ...counts, [type]: (counts[type] ?? 0) + 1 }),
      {},
    );
    for (const [type, count] of Object.entries(perType)) expect(count, type).toBeLessThanOrEqual(slots[type]!);
  });

  it('serves the UI pointed at the temporal frontend', () => {
    const [host, port] = env('temporal-ui', 'TEMPORAL_ADDRESS').split(':');
    expect(host).toBe('temporal');
    expect(Number(port)).toBe(temporalGrpcPort);
    expect(argv(service('temporal-ui').ports)).toContainEqual(expect.stringMatching(/:8080:8080$/));
  });
});

describe('sglang', () => {
  it('launches the SGLang server on the served model', () => {
    expect(sglangArgs.slice(0, 3)).toEqual(['python3', '-m', 'sglang.launch_server']);
    expect(flag(sglangArgs, '--model-path')).toBe('Qwen/Qwen3-1.7B');
    expect(flag(sglangArgs, '--host')).toBe('0.0.0.0');
  });

  it('reserves an NVIDIA GPU', () => {
    const devices = service('sglang').deploy?.resources?.reservations?.devices ?? [];
    expect(devices).toContainEqual(expect.objectContaining({ driver: 'nvidia', capabilities: ['gpu'] }));
  });

  it('is health-checked on /health', () => {
    const test = argv(service('sglang').healthcheck?.test).join(' ');
    expect(test).toContain(`:${flag(sglangArgs, '--port')}/health`);
  });
});

describe('ratchet workers', () => {
  it('run the cpu and gpu roles from the Dockerfile, restarting unless stopped', () => {
    expect(argv(service('ratchet-cpu-worker').command)).toEqual(['worker', 'cpu']);
    expect(argv(service('ratchet-gpu-worker').command)).toEqual(['worker', 'gpu']);
    for (const name of workers) {
      expect(service(name).build).toBeDefined();
      expect(service(name)).toHaveProperty('restart', 'unless-stopped');
    }
  });

  it('point TEMPORAL_ADDRESS at the temporal service gRPC port', () => {
    for (const name of workers) {
      const [host, port] = env(name, 'TEMPORAL_ADDRESS').split(':');
      expect(host).toBe('temporal');
      expect(Number(port)).toBe(temporalGrpcPort);
      expect(env(name, 'TEMPORAL_NAMESPACE')).toBe(env('temporal-namespace-setup', 'TEMPORAL_NAMESPACE'));
    }
  });

  it('point DATABASE_URL at the postgres service and the ratchet database the init script creates', () => {
    for (const name of workers) {
      const url = new URL(env(name, 'DATABASE_URL'));
      expect(url.protocol).toMatch(/^postgres(ql)?:$/);
      expect(service(url.hostname).image).toMatch(/^postgres:/);
      expect(url.port || '5432').toBe('5432');
      expect(createdDatabases).toContain(url.pathname.slice(1));
      expect(url.pathname).toBe('/ratchet');
      expect(createdRoles).toContain(url.username);
    }
  });

  it('point the GPU worker at the sglang service port', () => {
    const url = new URL(env('ratchet-gpu-worker', 'RATCHET_POLICY_URL'));
    expect(url.hostname).toBe('sglang');
    expect(url.port).toBe(flag(sglangArgs, '--port'));
  });

  it('give the GPU worker exactly the server batch capacity as slots', () => {
    expect(env('ratchet-gpu-worker', 'RATCHET_GPU_SLOTS')).toBe(flag(sglangArgs, '--max-running-requests'));
  });

  it('start only once the namespace is ready, and the GPU worker once sglang is healthy', () => {
    for (const name of workers) {
      expect(dependencies(name)).toMatchObject({
        postgres: 'service_healthy',
        'temporal-namespace-setup': 'service_completed_successfully',
      });
    }
    expect(dependencies('ratchet-gpu-worker')).toMatchObject({ sglang: 'service_healthy' });
  });

  it('read the tokenizer from a volume filled with the served model tokenizer', () => {
    for (const name of workers) {
      const dir = env(name, 'RATCHET_TOKENIZER');
      const mount = service(name)
        .volumes?.map(interpolate)
        .find((v) => v.split(':')[1] === dir);
      expect(mount, `${name} mounts nothing at ${dir}`).toBeDefined();
      const volume = mount!.split(':')[0]!;
      expect(service('policy-tokenizer').volumes).toContain(`${volume}:${env('policy-tokenizer', 'RATCHET_TOKENIZER')}`);
      expect(env('policy-tokenizer', 'RATCHET_MODEL')).toBe(flag(sglangArgs, '--model-path'));
      expect(env('policy-tokenizer', 'RATCHET_MODEL_REVISION')).toBe(flag(sglangArgs, '--revision'));
      expect(dependencies(name)).toMatchObject({ 'policy-tokenizer': 'service_completed_successfully' });
    }
    expect(scriptRunBy('policy-tokenizer')).toMatch(/tokenizer\.json[\s\S]*tokenizer_config\.json/);
  });

  it('let the CPU worker scale: no fixed container name, replicas set', () => {
    expect(service('ratchet-cpu-worker')).not.toHaveProperty('container_name');
    expect(service('ratchet-cpu-worker').deploy?.replicas).toBeGreaterThanOrEqual(1);
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const instruction = (name: string) => [...dockerfile.matchAll(new RegExp(`^${name}\\s+(.+)$`, 'gm'))].map((m) => m[1]!.trim());

  it('runs the entrypoint file that package.json bin.ratchet names', () => {
    const pkg = JSON.parse(read('package.json')) as { bin: { ratchet: string } };
    const entrypoint = JSON.parse(instruction('ENTRYPOINT').at(-1)!) as string[];
    expect(entrypoint).toEqual(['node', pkg.bin.ratchet.replace(/^\.\//, '')]);
    expect(JSON.parse(instruction('CMD').at(-1)!)).toEqual(['worker', 'cpu']);
  });

  it('builds on node 24 (the LTS CI runs the demo and the replays on) bookworm-slim with dev deps, then prunes them', () => {
    expect(instruction('FROM').length).toBeGreaterThanOrEqual(2);
    for (const from of instruction('FROM')) expect(from).toMatch(/^node:(24|\$\{NODE_VERSION\})[\w.-]*bookworm-slim/);
    const ciNode = /^NODE_LTS=([\d.]+)$/m.exec(read('.ci/run'))?.[1];
    expect(ciNode).toMatch(/^24\./);
    expect(dockerfile).toContain(`ARG NODE_VERSION=${ciNode}\n`);
    expect(dockerfile.indexOf('npm ci')).toBeGreaterThan(-1);
    expect(dockerfile.indexOf('npm prune --omit=dev')).toBeGreaterThan(dockerfile.indexOf('npm ci'));
  });

  it("applies Ratchet's patches to its dependencies (patches/, by npm ci's postinstall)", () => {
    expect(instruction('COPY')).toContain('patches ./patches');
    expect(dockerfile.indexOf('COPY patches')).toBeLessThan(dockerfile.search(/^RUN .*npm ci/m));
    expect(read('.dockerignore').split('\n')).not.toContain('patches');
    expect((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.postinstall).toContain('patch-package --error-on-fail');
  });

  it('runs as a non-root user', () => {
    expect(instruction('USER').at(-1)).toMatch(/^(?!root$|0$)\w+/);
  });

  it('gives code answers bubblewrap and an interpreter with numpy from the hashed lock `ratchet setup` uses', () => {
    expect(dockerfile).toMatch(/apt-get install[^\n]*\bpython3\b[^\n]*\bpython3-venv\b[^\n]*\bbubblewrap\b/);
    expect(instruction('COPY')).toContain('scripts/code-python/requirements.lock /opt/ratchet/code-python.lock');
    expect(dockerfile).toMatch(/pip install [^\n]*--require-hashes[^\n]*-r \/opt\/ratchet\/code-python\.lock/);
    expect(instruction('ENV')).toContain('RATCHET_CODE_PYTHON=/opt/ratchet/code-python/bin/python');
    expect(read('.dockerignore').split('\n')).not.toContain('scripts');
  });

  it('keeps local state and build output out of the build context', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((line) => line.trim());
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.ratchet', '.git']));
  });
});
