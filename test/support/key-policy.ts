/**
 * A small evaluator of synthesized KMS key policies, for the infra tests: whether a principal of the account may make
 * a KMS call when its own IAM policy allows everything (an administrator), so the key policy is all that stands in
 * the way. Only the condition operators the stacks use are known; another one throws, so a new kind of condition
 * cannot pass unread.
 */
export const ACCOUNT = '111122223333';

export interface PolicyStatement {
  Sid?: string;
  Effect: string;
  Principal?: { AWS: string } | '*';
  Action: string | string[];
  Resource?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

// How CloudFormation renders a policy in one account and region, so ARNs read as IAM compares them.
export const REGION = 'eu-west-1';
const PSEUDO: Record<string, string> = { 'AWS::Partition': 'aws', 'AWS::AccountId': ACCOUNT, 'AWS::Region': REGION };

/** A template value with its pseudo parameters and joins resolved, as IAM reads it. */
export const renderPolicy = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(renderPolicy);
  if (value === null || typeof value !== 'object') return value;
  const o = value as Record<string, unknown>;
  if (typeof o.Ref === 'string' && o.Ref in PSEUDO) return PSEUDO[o.Ref];
  if (Array.isArray(o['Fn::Join'])) {
    const [separator, parts] = o['Fn::Join'] as [string, unknown[]];
    return parts.map(renderPolicy).join(separator);
  }
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, renderPolicy(v)]));
};

export const asArray = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/** IAM's StringLike: `*` any run of characters (slashes included), `?` one character, everything else literal. */
export const glob = (pattern: string) =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );
export const matchesAny = (patterns: readonly string[], value: string) => patterns.some((p) => glob(p).test(value));
export const covers = (statement: PolicyStatement, action: string) =>
  asArray(statement.Action).some((pattern) => glob(pattern.toLowerCase()).test(action.toLowerCase()));

/** An Allow for the account root is the key's delegation to IAM; any matching Deny wins. */
export function keyPolicyAllows(
  statements: PolicyStatement[],
  principalArn: string,
  action: string,
  context: Record<string, string> = {},
): boolean {
  const request: Record<string, string> = {
    'aws:PrincipalArn': principalArn,
    'aws:PrincipalIsAWSService': 'false',
    'kms:CallerAccount': ACCOUNT,
    ...context,
  };
  const principalMatches = (st: PolicyStatement) => {
    const p = st.Principal === '*' ? '*' : st.Principal?.AWS;
    return p === '*' || p === `arn:aws:iam::${ACCOUNT}:root` || p === principalArn;
  };
  const conditionHolds = (st: PolicyStatement) =>
    Object.entries(st.Condition ?? {}).every(([operator, keys]) =>
      Object.entries(keys).every(([key, expected]) => holds(operator, request[key], asArray(expected as string))),
    );
  const applies = (st: PolicyStatement) => principalMatches(st) && covers(st, action) && conditionHolds(st);
  return (
    !statements.some((st) => st.Effect === 'Deny' && applies(st)) &&
    statements.some((st) => st.Effect === 'Allow' && applies(st))
  );
}

function holds(operator: string, actual: string | undefined, values: string[]): boolean {
  switch (operator) {
    case 'StringEquals':
    case 'Bool':
      return actual !== undefined && values.includes(actual);
    case 'BoolIfExists':
      return actual === undefined || values.includes(actual);
    case 'StringLike':
      return actual !== undefined && matchesAny(values, actual);
    case 'StringNotLike':
      return actual === undefined || !matchesAny(values, actual);
    default:
      throw new Error(`The test evaluator does not know the condition operator ${operator}`);
  }
}
