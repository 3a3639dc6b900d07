import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The layers of src/, bottom first: a folder may import from its own layer and the layers below it, never from one
 * above, and no two folders may import each other, however indirectly. A root file (config.ts) is a folder of its
 * own, named without `.ts`. docs/architecture.md ("Layers") shows the same table; layers.test.ts keeps the two equal.
 */
export const LAYERS: readonly { name: string; folders: readonly string[] }[] = [
  // Settings, logging, task queue names, secret redaction, time budgets and polling: what every part needs, knowing
  // nothing of trajectories.
  { name: 'foundation', folders: ['config', 'logging', 'task-queues', 'secrets', 'timing'] },
  // The domain and its contracts, with no Temporal, Postgres or network: the trajectory request, result and identity,
  // group membership and the staleness formula, rewards and packing, chat templates, verifiers, code tasks, the
  // environments built on them, datasets, training steps. The workflow bundle imports from here, so what it imports stays free of Node built-ins.
  { name: 'domain', folders: ['admission', 'trajectory', 'verifier', 'code', 'tokens', 'agent', 'environments', 'datasets', 'training'] },
  // One folder per outside system, spoken to in the domain's types: Postgres, the inference servers, and Temporal
  // (the one place a connection is made, and the search attributes every side agrees on).
  { name: 'adapters', folders: ['store', 'policy', 'temporal'] },
  // What is read out of Postgres for others: Prometheus metrics, claimed batches, Arrow and Parquet files.
  { name: 'read side', folders: ['metrics', 'consumption', 'export'] },
  // One file per activity: thin adapters from an activity's input to a domain module, the store or a policy.
  { name: 'activities', folders: ['activities'] },
  // Deterministic workflow code; it takes the activities as types only.
  { name: 'workflows', folders: ['workflows'] },
  // Temporal workers: the CPU worker (workflows and CPU activities) and the GPU worker.
  { name: 'workers', folders: ['workers'] },
  // What a trainer uses: submit (one request builder, one validation), follow, consume, acknowledge.
  { name: 'client', folders: ['client'] },
  // Long-running loops beside the workers: the admission controller and its sweeps, the policy-version watcher and
  // the GPU worker service it keeps on the newest version.
  { name: 'processes', folders: ['processes'] },
  // The local stack: embedded Postgres and Temporal, and the runtime assembled on them.
  { name: 'stack', folders: ['stack'] },
  // The web UI over Postgres and Temporal.
  { name: 'ui', folders: ['ui'] },
  // Entry points: the `ratchet` command and the library's public exports (index.ts).
  { name: 'entry points', folders: ['cli', 'index'] },
];

/** One relative import of a source file, with the folders at both ends. */
export interface FolderImport {
  /** The importing file, relative to src/. */
  file: string;
  specifier: string;
  from: string;
  to: string;
}

/** The folder of a path relative to src/: its first directory, or a root file's name without `.ts`. */
export function folderOf(relative: string): string {
  const [first, ...rest] = relative.split('/');
  return rest.length > 0 ? first! : first!.replace(/\.ts$/, '');
}

/**
 * The module specifiers a TypeScript file names: imports and `import type`, `export ... from`, side-effect
 * imports, `import x = require()`, dynamic `import()` and `import('…').Type`.
 */
export function specifiersOf(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push(node.moduleSpecifier.text);
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      found.push(node.moduleReference.expression.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every import in src/ from one folder to another (imports within a folder, of packages, or out of src/ are left out). */
export function folderImports(srcRoot: string): FolderImport[] {
  const files = readdirSync(srcRoot, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.(ts|mts|cts|tsx)$/.test(entry.name))
    .map((entry) => path.relative(srcRoot, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
  return files.flatMap((file) =>
    specifiersOf(file, readFileSync(path.join(srcRoot, file), 'utf8'))
      .filter((specifier) => specifier.startsWith('.'))
      .flatMap((specifier) => {
        const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier));
        if (target.startsWith('../')) return [];
        const edge = { file, specifier, from: folderOf(file), to: folderOf(target.replace(/\.js$/, '.ts')) };
        return edge.from === edge.to ? [] : [edge];
      }),
  );
}

/** Imports that point up the layers, or that start or end in a folder no layer names. */
export function layerViolations(imports: readonly FolderImport[], layers: typeof LAYERS = LAYERS): string[] {
  const layerOf = new Map(layers.flatMap(({ folders }, index) => folders.map((folder) => [folder, index] as const)));
  return imports.flatMap((edge) => {
    const from = layerOf.get(edge.from);
    const to = layerOf.get(edge.to);
    const where = `src/${edge.file} imports '${edge.specifier}'`;
    if (from === undefined || to === undefined) {
      const folder = from === undefined ? edge.from : edge.to;
      return [`${where}: folder ${folder} is in no layer (add it to LAYERS in test/lint/layers.ts and to docs/architecture.md)`];
    }
    return to > from ? [`${where}: ${edge.from} (${layers[from]!.name}) imports upward from ${edge.to} (${layers[to]!.name})`] : [];
  });
}

/**
 * Each set of folders that import each other (a strongly connected component, by Tarjan's algorithm), shown by its
 * shortest cycle with one import for each step.
 */
export function folderCycles(imports: readonly FolderImport[]): string[] {
  const graph = new Map<string, Set<string>>();
  for (const { from, to } of imports) {
    if (!graph.has(from)) graph.set(from, new Set());
    if (!graph.has(to)) graph.set(to, new Set());
    graph.get(from)!.add(to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const components: string[][] = [];
  const connect = (folder: string): void => {
    index.set(folder, index.size);
    low.set(folder, index.get(folder)!);
    stack.push(folder);
    for (const next of graph.get(folder)!) {
      if (!index.has(next)) {
        connect(next);
        low.set(folder, Math.min(low.get(folder)!, low.get(next)!));
      } else if (stack.includes(next)) {
        low.set(folder, Math.min(low.get(folder)!, index.get(next)!));
      }
    }
    if (low.get(folder) !== index.get(folder)) return;
    const component = stack.splice(stack.indexOf(folder));
    if (component.length > 1) components.push(component.sort());
  };
  for (const folder of [...graph.keys()].sort()) if (!index.has(folder)) connect(folder);
  return components.map((component) => {
    const cycle = component.map((start) => shortestCycle(graph, start, component)).reduce((a, b) => (b.length < a.length ? b : a));
    const steps = cycle.map((from, i) => imports.find((edge) => edge.from === from && edge.to === cycle[(i + 1) % cycle.length])!);
    return (
      `folders ${component.join(', ')} import each other, e.g. ${[...cycle, cycle[0]].join(' -> ')}: ` +
      steps.map((edge) => `src/${edge.file} imports '${edge.specifier}'`).join('; ')
    );
  });
}

/** The shortest path from `start` back to itself within `component` (breadth first), as the folders on it. */
function shortestCycle(graph: ReadonlyMap<string, ReadonlySet<string>>, start: string, component: readonly string[]): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i += 1) {
    for (const next of graph.get(queue[i]!)!) {
      if (!component.includes(next) || cameFrom.has(next)) continue;
      cameFrom.set(next, queue[i]!);
      if (next === start) {
        const path = [];
        for (let at = cameFrom.get(start)!; at !== start; at = cameFrom.get(at)!) path.unshift(at);
        return [start, ...path];
      }
      queue.push(next);
    }
  }
  return component.slice();
}
