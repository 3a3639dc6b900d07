import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// docs/architecture.md is the map of the code: every folder of src/ (any depth), and of test/, scripts/ and bench/
// (two levels down), has its line there; the README's architecture section names every folder of src/.
const root = path.resolve(import.meta.dirname, '../..');

function foldersUnder(top: string, depth: number): string[] {
  const found: string[] = [];
  const walk = (dir: string, level: number): void => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name === '__pycache__' || entry.name.startsWith('.')) continue;
      const folder = `${dir}/${entry.name}`;
      found.push(folder);
      if (level < depth) walk(folder, level + 1);
    }
  };
  walk(top, 1);
  return found.sort();
}

describe('the folder map', () => {
  const map = readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');

  for (const [top, depth] of [
    ['src', Infinity],
    ['test', 2],
    ['scripts', 2],
    ['bench', 2],
  ] as const) {
    it(`docs/architecture.md names every folder of ${top}/`, () => {
      expect(foldersUnder(top, depth).filter((folder) => !map.includes(`\`${folder}/\``))).toEqual([]);
    });
  }

  it("the README's architecture section names every folder of src/", () => {
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('\n## Architecture'), readme.indexOf('\n## ', readme.indexOf('\n## Architecture') + 1));
    expect(section).toContain('docs/architecture.md');
    expect(foldersUnder('src', 1).filter((folder) => !section.includes(`${folder}/`))).toEqual([]);
  });
});
