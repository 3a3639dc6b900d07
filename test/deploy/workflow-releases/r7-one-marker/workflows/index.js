export { trajectory } from './trajectory.js';
//# sourceMappingURL=index.js.map