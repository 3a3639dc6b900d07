// Imported first by scripts/demo-train/demo-train.ts, before anything that creates a logger: the demo's own lines are its
// output, so the workers and the Temporal SDK log errors only unless LOG_LEVEL asks for more.
process.env.LOG_LEVEL ??= 'error';
