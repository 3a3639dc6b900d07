import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { MIGRATIONS } from '../../src/store/schema/migrations.js';

/**
 * Every shipped artefact that is never edited, by a logical name that survives moving its file, with the sha256
 * of its content (docs/releases.md):
 * - `migration <id>`: the SQL the migration applies (006 is the batch protocol), each line trimmed and blank lines
 *   dropped, so the SQL may move between files and indentations but not change;
 * - `workflow releaseTwoTrajectory`: the frozen release-2 loop wherever it lives, its statements below the
 *   imports (an import may be re-pointed when the module it names moves);
 * - `release folder <release>/<file>`: the compiled workflow code of each release in test/deploy/workflow-releases/;
 * - `replay history <file>`: the recorded histories in test/replay/histories/.
 */
export const MANIFEST = fileURLToPath(new URL('./frozen-artefacts.json', import.meta.url));

const root = fileURLToPath(new URL('../../', import.meta.url));
const RELEASE_FOLDERS = path.join(root, 'test/deploy/workflow-releases');
const REPLAY_HISTORIES = path.join(root, 'test/replay/histories');

function sha256(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

export function currentArtefacts(): Map<string, string> {
  const artefacts = new Map<string, string>();
  for (const migration of MIGRATIONS) artefacts.set(`migration ${migration.id}`, sha256(sqlAsWritten(migration.sql)));
  artefacts.set('workflow releaseTwoTrajectory', sha256(statementsBelowImports(findSource('export async function releaseTwoTrajectory('))));
  for (const release of readdirSync(RELEASE_FOLDERS, { withFileTypes: true }).filter((entry) => entry.isDirectory())) {
    for (const file of filesUnder(path.join(RELEASE_FOLDERS, release.name))) {
      artefacts.set(`release folder ${release.name}/${file}`, sha256(readFileSync(path.join(RELEASE_FOLDERS, release.name, file))));
    }
  }
  for (const file of filesUnder(REPLAY_HISTORIES)) artefacts.set(`replay history ${file}`, sha256(readFileSync(path.join(REPLAY_HISTORIES, file))));
  return artefacts;
}

/** The SQL's lines, trimmed, without blank ones: where it sits and how far it is indented are not the SQL. */
function sqlAsWritten(sql: string): string {
  return sql
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join('\n');
}

/** The one TypeScript file under src/ that contains `marker`. */
function findSource(marker: string): { file: string; text: string } {
  const found = filesUnder(path.join(root, 'src'))
    .filter((file) => file.endsWith('.ts'))
    .map((file) => ({ file, text: readFileSync(path.join(root, 'src', file), 'utf8') }))
    .filter(({ text }) => text.includes(marker));
  if (found.length !== 1)
    throw new Error(`expected one file under src/ with "${marker}", found ${found.length}: ${found.map(({ file }) => file).join(', ')}`);
  return found[0]!;
}

function statementsBelowImports({ file, text }: { file: string; text: string }): string {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  return source.statements
    .filter((statement) => !ts.isImportDeclaration(statement))
    .map((statement) => statement.getFullText(source))
    .join('')
    .trimStart();
}

/** Paths relative to `dir`, with `/`, sorted. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
}

export function readManifest(): Record<string, string> {
  return (JSON.parse(readFileSync(MANIFEST, 'utf8')) as { artefacts: Record<string, string> }).artefacts;
}
