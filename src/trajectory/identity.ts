/** Who a trajectory is: what the workflow hands to `persist` with its outcome, and the store's row keys. */
export interface TrajectoryIdentity {
  trajectoryId: string;
  qid: string;
  taskId?: number;
  birthTime: number;
  layout: string;
  /** The environment it runs in (absent in histories recorded before environments: math, or code for a code task). */
  environment?: string;
}
