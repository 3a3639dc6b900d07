export { DatasetNotFound } from './dataset-not-found.js';
export { loadDataset } from './load-file.js';
export { parseDatasetText } from './parse-text.js';
export type { DatasetOptions, LoadedDataset, Problem } from './problem.js';
export { RowError } from './row-error.js';
