import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { specifiersOf } from './layers.js';

// The product, its tools and its benchmarks never reach into the test suite: what they share with the tests lives in
// src/ (the stack, the vLLM server, poll-until) or scripts/support/ (the chromium driver, the seed-invariant checks),
// and the tests import it from there.
const root = path.resolve(import.meta.dirname, '../..');
const TEST_DIR = path.join(root, 'test');

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|mts|js|mjs)$/.test(entry.name))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/** `file: specifier` for each relative import of `file` that lands in test/. */
function testImportsOf(file: string, text: string): string[] {
  return specifiersOf(file, text)
    .filter((specifier) => specifier.startsWith('.'))
    .filter((specifier) => {
      const target = path.resolve(path.dirname(file), specifier);
      return target === TEST_DIR || target.startsWith(`${TEST_DIR}${path.sep}`);
    })
    .map((specifier) => `${path.relative(root, file)}: ${specifier}`);
}

describe('no test imports outside test/', () => {
  it('finds an import of test/ when there is one', () => {
    expect(testImportsOf(path.join(root, 'scripts/x.ts'), "import { startTestStack } from '../test/integration/local-stack.js';")).toEqual([
      'scripts/x.ts: ../test/integration/local-stack.js',
    ]);
    expect(testImportsOf(path.join(root, 'src/a/b.ts'), "import '../../test/setup-logging.js';\nimport { x } from '../tests.js';")).toEqual([
      'src/a/b.ts: ../../test/setup-logging.js',
    ]);
  });

  for (const folder of ['src', 'scripts', 'bench'].filter((name) => existsSync(path.join(root, name)))) {
    it(`no file in ${folder}/ imports from test/`, () => {
      const found = sourcesUnder(path.join(root, folder)).flatMap((file) => testImportsOf(file, readFileSync(file, 'utf8')));
      expect(found).toEqual([]);
    });
  }
});
