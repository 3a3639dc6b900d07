// `npm run build`'s last step: the workflow bundle, built once here rather than at every worker start.
import { writeWorkflowBundle } from './workflow-bundle.js';

process.stdout.write(`workflow bundle: ${await writeWorkflowBundle()}\n`);
