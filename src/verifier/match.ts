/** Whether two answers are the same, and the rule that decided it. */
export interface Match {
  equal: boolean;
  rule: string;
}
