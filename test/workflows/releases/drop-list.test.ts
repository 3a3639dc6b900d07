import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DROP_LIST } from '../../../src/workflows/releases/drop-list.js';
import { Patch } from '../../../src/workflows/releases/patches.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

describe('the drop list of old releases', () => {
  it('lists every patch, once', () => {
    const listed = DROP_LIST.filter((measure) => measure.patch).map((measure) => measure.id);
    expect(listed.sort()).toEqual(Object.values(Patch).sort());
    expect(new Set(DROP_LIST.map((measure) => measure.id)).size).toBe(DROP_LIST.length);
  });

  it('names code that exists: each kept file, and the function or type it names', () => {
    const missing: string[] = [];
    for (const measure of DROP_LIST) {
      expect(measure.keepsAlive.length, measure.id).toBeGreaterThan(0);
      for (const kept of measure.keepsAlive) {
        const [file, what] = kept.split(': ', 2) as [string, string | undefined];
        const name = /[A-Za-z_]\w*/.exec(what ?? '')?.[0];
        if (!existsSync(`${root}${file}`)) missing.push(`${measure.id}: ${file} does not exist (moved? update src/workflows/releases/drop-list.ts)`);
        else if (!name || !readFileSync(`${root}${file}`, 'utf8').includes(name))
          missing.push(`${measure.id}: ${file} has no ${name ?? '(no name given)'}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('live code and old releases', () => {
  // What live code may take from the releases folders: the patch ids and the frozen loop (the workflow), the
  // registration of the old activities, the reading of an old heartbeat. Never the old activities themselves.
  const ENTRY_POINTS = new Set([
    'workflows/releases/patches',
    'workflows/releases/release-two',
    'activities/releases/index',
    'activities/releases/token-heartbeats',
  ]);

  it('reach the releases folders only through their entry points', () => {
    const src = path.join(root, 'src');
    const borrowed: string[] = [];
    for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
      const file = path.join(entry.parentPath, entry.name);
      if (!entry.isFile() || !file.endsWith('.ts') || file.split(path.sep).includes('releases')) continue;
      for (const [, specifier] of readFileSync(file, 'utf8').matchAll(/(?:from|import\()\s*(?:\/\*[^*]*\*\/\s*)?'([^']*\/releases\/[^']*)'/g)) {
        const target = path
          .relative(src, path.resolve(path.dirname(file), specifier!))
          .replace(/\.js$/, '')
          .split(path.sep)
          .join('/');
        if (!ENTRY_POINTS.has(target)) borrowed.push(`${path.relative(root, file)} imports ${specifier}`);
      }
    }
    expect(borrowed, 'live code must not borrow from code kept only for old releases: move the shared logic into a live module').toEqual([]);
  });
});
