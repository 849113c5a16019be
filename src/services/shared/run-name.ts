/**
 * How a person names a run (DASHBOARD 1): "Run #3 of Customer shipment"; unnumbered runs (N-1) by workflow
 * alone. Here, below the domains, because the audit log names runs too and every domain records audit rows.
 */
export function runName(number: number, workflowName: string): string {
  return number > 0 ? `Run #${number} of ${workflowName}` : `Run of ${workflowName}`;
}
