/** Who a trajectory is: what the workflow hands to `persist` with its outcome, and the store's row keys. */
export interface TrajectoryIdentity {
  trajectoryId: string;
  qid: string;
  taskId?: number;
  birthTime: number;
  layout: string;
}
