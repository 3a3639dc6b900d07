import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// The project's own ESLint config, run on code that breaks each rule. The probes are not files on disk, so they
// are typed by a default project instead of tsconfig.check.json (the rules are the same).
const root = fileURLToPath(new URL('../../', import.meta.url));
const eslint = new ESLint({
  cwd: root,
  overrideConfig: {
    languageOptions: { parserOptions: { project: false, projectService: { allowDefaultProject: ['src/workflows/*.ts', 'scripts/*.ts'] } } },
  },
});

async function rulesBroken(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((message) => message.ruleId ?? message.message);
}

describe('lint', () => {
  it('forbids Node built-ins in workflow files, with or without the node: prefix', async () => {
    expect(await rulesBroken('src/workflows/lint-probe.ts', "import { readFile } from 'node:fs/promises';\nexport const r = readFile;\n")).toContain(
      'no-restricted-imports',
    );
    expect(await rulesBroken('src/workflows/lint-probe.ts', "import crypto from 'crypto';\nexport const c = crypto;\n")).toContain(
      'no-restricted-imports',
    );
    expect(await rulesBroken('scripts/lint-probe.ts', "import { readFile } from 'node:fs/promises';\nexport const r = readFile;\n")).toEqual([]);
  }, 60_000);

  it('forbids floating promises', async () => {
    const floating = 'async function write(): Promise<void> {}\nexport function caller(): void {\n  write();\n}\n';
    expect(await rulesBroken('scripts/lint-probe.ts', floating)).toContain('@typescript-eslint/no-floating-promises');
    expect(await rulesBroken('scripts/lint-probe.ts', floating.replace('  write();', '  void write();'))).toEqual([]);
  }, 60_000);
});
