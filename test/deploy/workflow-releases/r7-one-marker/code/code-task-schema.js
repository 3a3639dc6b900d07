import { z } from 'zod';
// Postgres text and jsonb cannot store U+0000: a test case carrying one could never be recorded.
const text = z.string().regex(/^[^\u0000]*$/, 'must not contain NUL (U+0000), which Postgres cannot store');
/**
 * The code task as a trajectory request carries it (`request.code`), for the request schema to include:
 * the tests and the row's limits, exactly `CodeTask`. A request with `code` is judged by its tests, not by
 * `gold`.
 */
export const codeTaskSchema = z
    .strictObject({
    tests: z
        .strictObject({
        inputs: z.array(text).min(1, 'must hold at least one test case'),
        outputs: z.array(text),
        fnName: z.string().regex(/^([A-Za-z_]\w*)?$/, 'must be empty (stdin/stdout) or a Python identifier'),
    })
        .refine((tests) => tests.inputs.length === tests.outputs.length, {
        message: 'inputs and outputs must have the same length',
        path: ['outputs'],
    }),
    timeoutS: z.number().positive().optional().meta({ description: 'Wall-clock limit per test case in seconds; default 6.' }),
    memoryMb: z.number().positive().optional().meta({ description: 'Memory limit of the solution in MB; default 512.' }),
})
    .meta({
    description: "A code task: the answer's last Python block must pass every test case (stdin/stdout, or LeetCode-style when `fnName` is set).",
});
//# sourceMappingURL=code-task-schema.js.map