import { defineQuery } from '@temporalio/workflow';
export const stateQuery = defineQuery('state');
//# sourceMappingURL=trajectory-state.js.map