export type { CodeTask, CodeTests, CodeVerdict, CodeVerdictStatus } from './types.js';
export { extractCode, MIN_CODE_CHARS } from './extract-code.js';
export { matchOutput, type OutputRule } from './compare-output.js';
export { matchReturn, type ReturnRule } from './compare-return.js';
export { parseTests, type ParsedTests } from './input-output.js';
export { CodeSandboxPool } from './sandbox-pool.js';
export { sandboxConfigFromEnv, type IsolationTool, type SandboxConfig } from './sandbox-config.js';
export { SandboxFailure } from './sandbox-failure.js';
export { DEFAULT_MEMORY_MB, DEFAULT_TEST_TIMEOUT_S, sharedCodeSandboxPool, verifyCodeAnswer, type VerifyCodeOptions } from './verify-code.js';
