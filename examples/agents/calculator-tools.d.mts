/** Types of calculator-tools.mjs, for the TypeScript agent (workflow-agent/activities.ts). */
export declare function calculate(expression: string): string;
export declare function convert(input: { value: number; from: string; to: string }): string;
export declare const UNITS: Record<string, [dimension: string, size: number]>;
