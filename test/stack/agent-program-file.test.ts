import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentProgramFileError, loadAgentProgramFile } from '../../src/stack/agent-program-file.js';

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'ratchet-agent-programs-'));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

async function file(content: string): Promise<string> {
  const where = path.join(folder, `${Math.random().toString(36).slice(2)}.json`);
  await writeFile(where, content);
  return where;
}

describe('RATCHET_AGENT_PROGRAMS', () => {
  it('registers named programs; a relative cwd is the file folder’s, which is also the default', async () => {
    const where = await file(
      JSON.stringify([
        { name: 'calc', command: ['node', 'ts-agent.mjs'] },
        { name: 'py-calc', command: ['python3', 'agent.py'], cwd: 'sub', env: { MODE: 'x' } },
        { name: 'wf-calc', workflow: 'calculatorAgent', taskQueue: 'my-agents' },
      ]),
    );
    expect(await loadAgentProgramFile(where)).toEqual([
      { name: 'calc', command: ['node', 'ts-agent.mjs'], cwd: folder },
      { name: 'py-calc', command: ['python3', 'agent.py'], cwd: path.join(folder, 'sub'), env: { MODE: 'x' } },
      { name: 'wf-calc', workflow: 'calculatorAgent', taskQueue: 'my-agents' },
    ]);
    expect(await loadAgentProgramFile(undefined)).toEqual([]);
  });

  it.each([
    ['a missing file', null, 'cannot read'],
    ['not JSON', '[{', 'cannot read'],
    ['an empty command', JSON.stringify([{ name: 'a', command: [] }]), 'command'],
    ['a typo in a field', JSON.stringify([{ name: 'a', comand: ['x'] }]), 'comand'],
    ['a name with a space', JSON.stringify([{ name: 'a b', command: ['x'] }]), 'name'],
    [
      'a name twice',
      JSON.stringify([
        { name: 'a', command: ['x'] },
        { name: 'a', command: ['y'] },
      ]),
      'taken',
    ],
    ['neither a command nor a workflow', JSON.stringify([{ name: 'a' }]), 'exactly one of "command"'],
    ['both a command and a workflow', JSON.stringify([{ name: 'a', command: ['x'], workflow: 'w', taskQueue: 'q' }]), 'exactly one of "command"'],
    ['a workflow without its task queue', JSON.stringify([{ name: 'a', workflow: 'w' }]), 'needs "taskQueue"'],
    ['a workflow with a cwd', JSON.stringify([{ name: 'a', workflow: 'w', taskQueue: 'q', cwd: '.' }]), 'are for a command'],
    ['an environment’s name', JSON.stringify([{ name: 'math', command: ['x'] }]), 'taken'],
  ])('stops the worker on %s, saying why', async (_, content, why) => {
    const where = content === null ? path.join(folder, 'absent.json') : await file(content);
    const loading = loadAgentProgramFile(where, ['math']);
    await expect(loading).rejects.toThrow(AgentProgramFileError);
    await expect(loading).rejects.toThrow(why);
  });
});
