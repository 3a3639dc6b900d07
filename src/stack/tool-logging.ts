import { installTemporalLogging } from '../logging.js';

// Imported for its effect by the tests, the benchmarks and the tools: expected failures (rejected requests, killed
// workers) are logged by the SDK at WARN; keep their output to errors unless LOG_LEVEL asks for more.
try {
  installTemporalLogging(process.env.LOG_LEVEL ?? 'error');
} catch {
  // Already installed in this process by an earlier file.
}
