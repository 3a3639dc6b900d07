import { installTemporalLogging } from '../src/logging.js';

// Expected failures (rejected requests, killed workers) are logged by the SDK at WARN; keep test output to errors.
try {
  installTemporalLogging(process.env.LOG_LEVEL ?? 'error');
} catch {
  // Already installed in this process by an earlier file.
}
