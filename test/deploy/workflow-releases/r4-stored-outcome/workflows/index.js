export { trajectory } from './trajectory.js';
