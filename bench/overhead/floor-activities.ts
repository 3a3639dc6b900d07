export interface FloorActivities {
  generate(turn: number): Promise<number>;
  step(turn: number): Promise<number>;
  finish(): Promise<void>;
}

/** Counts finished workflows, so the benchmark waits on no workflow result (a long poll per workflow). */
export const finished = { count: 0 };

export const floorActivities: FloorActivities = {
  generate: async (turn) => turn,
  step: async (turn) => turn,
  finish: async () => {
    finished.count++;
  },
};
