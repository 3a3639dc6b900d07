import { RowCollector } from './collector.js';
import type { DatasetOptions, LoadedDataset } from './problem.js';

/**
 * Parses JSONL text already in memory. `file` names the source in row errors and gives the fallback
 * qids their stem (`data/sample.jsonl` → `sample-<line>`).
 */
export function parseDatasetText(text: string, file: string, options: DatasetOptions = {}): LoadedDataset {
  const collector = new RowCollector(file, options.limit);
  // Split where readline does (a lone CR ends a line too), so both loaders number lines alike.
  const lines = text.split(/\r\n|\n|\r/);
  for (let i = 0; i < lines.length && !collector.full; i++) {
    collector.add(lines[i] ?? '', i + 1);
  }
  return collector.result();
}
