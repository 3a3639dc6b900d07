import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { folderCycles, folderImports, layerViolations, LAYERS, specifiersOf, type FolderImport } from './layers.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const imports = folderImports(`${root}src`);

describe('layers of src/', () => {
  it('imports only from its own layer or the layers below', () => {
    expect(layerViolations(imports)).toEqual([]);
  });

  it('has no folders that import each other', () => {
    expect(folderCycles(imports)).toEqual([]);
  });

  it('reads the real imports, so an empty verdict means something', () => {
    expect(imports.length).toBeGreaterThan(100);
    expect(imports).toContainEqual({ file: 'workflows/trajectory.ts', specifier: '../activities/index.js', from: 'workflows', to: 'activities' });
  });

  it('is shown as declared in docs/architecture.md', () => {
    const section = readFileSync(`${root}docs/architecture.md`, 'utf8')
      .split(/^## Layers$/m)[1]!
      .split(/^## /m)[0]!;
    const rows = section
      .split('\n')
      .filter((line) => /^\| \d+ \|/.test(line))
      .map((line) => line.split('|').map((cell) => cell.trim()));
    const shown = rows.map(([, , name, folders]) => ({ name, folders: [...folders!.matchAll(/`([\w-]+)(?:\/|\.ts)`/g)].map((match) => match[1]) }));
    expect(shown).toEqual(LAYERS.map(({ name, folders }) => ({ name, folders })));
  });
});

describe('the layer check', () => {
  const edge = (from: string, to: string): FolderImport => ({ file: `${from}/probe.ts`, specifier: `../${to}/probe.js`, from, to });

  it('names the file and import of an upward import, and of a folder in no layer', () => {
    expect(layerViolations([edge('workflows', 'activities'), edge('store', 'workflows'), edge('scratch', 'store')])).toEqual([
      "src/store/probe.ts imports '../workflows/probe.js': store (adapters) imports upward from workflows (workflows)",
      "src/scratch/probe.ts imports '../store/probe.js': folder scratch is in no layer (add it to LAYERS in test/lint/layers.ts and to docs/architecture.md)",
    ]);
  });

  it('finds folders that import each other, even within a layer', () => {
    expect(folderCycles([edge('trajectory', 'code'), edge('code', 'verifier'), edge('verifier', 'trajectory'), edge('store', 'trajectory')])).toEqual(
      [
        'folders code, trajectory, verifier import each other, e.g. code -> verifier -> trajectory -> code: ' +
          "src/code/probe.ts imports '../verifier/probe.js'; src/verifier/probe.ts imports '../trajectory/probe.js'; src/trajectory/probe.ts imports '../code/probe.js'",
      ],
    );
    expect(folderCycles([edge('trajectory', 'code'), edge('store', 'trajectory')])).toEqual([]);
  });

  it('reads every form of import: type-only, re-exports, side effects, dynamic and import types', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { B } from '../b/b.js';",
      "export { c } from '../c/c.js';",
      "export type * from '../d/d.js';",
      "import '../e/e.js';",
      'const f = await import(/* webpackMode: "eager" */ \'../f/f.js\');',
      "let g: import('../g/g.js').G;",
      "import h = require('../h/h.js');",
      'export { a, f, g, h };',
    ].join('\n');
    expect(specifiersOf('probe.ts', text)).toEqual([
      './a.js',
      '../b/b.js',
      '../c/c.js',
      '../d/d.js',
      '../e/e.js',
      '../f/f.js',
      '../g/g.js',
      '../h/h.js',
    ]);
  });
});
