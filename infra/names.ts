/** `payroll-processing` → `PayrollProcessing`, `getEmployee` → `GetEmployee`: for construct ids, output keys and Sids. */
export function pascal(name: string): string {
  return name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');
}

/**
 * What names one deployment: `Payroll-<environment>-<stage>`, the prefix of its stacks, the namespace of its
 * business metrics (POWERTOOLS_METRICS_NAMESPACE) and the name of its CloudWatch dashboard.
 */
export function deploymentName(environment: string, stage: string): string {
  return `Payroll-${environment}-${stage}`;
}

/**
 * The id under which an AWS Control Tower rule (run by cfn-guard on every synth, app.ts) is acknowledged with
 * `Validations.of(construct).acknowledge`, as cdk-nag's are: `cdk-validator-cfnguard::<rule name>`.
 */
export const controlTower = (rule: string): string => `cdk-validator-cfnguard::${rule}`;
