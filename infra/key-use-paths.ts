import { Aws, type IAspect } from 'aws-cdk-lib';
import { type CfnRole, Policy, Role } from 'aws-cdk-lib/aws-iam';
import type { IConstruct } from 'constructs';
import type { KeyPurpose } from '../shared/adapters/envelope-encryption.js';
import type { PayrollFunction } from './constructs/payroll-function.js';

/**
 * The IAM path of a service role says which key uses the key policies admit it to, so the key policies (in the
 * stateful stack) can name the roles (in the API and workers stacks, which depend on it) without referring to them:
 * a reference back would be a dependency cycle. A role ARN carries its path (`arn:aws:iam::<account>:role/<path><name>`),
 * and so does `aws:PrincipalArn` for a role's sessions.
 *
 * A role has one path, and may have several uses: the path is `/payroll/<environment>/<stage>/` followed by one
 * segment per kind of use the role has, always in this order, e.g. the processor's
 * `/payroll/production/main/bank-account-decrypt/disbursement-bucket/disbursement-file-write/`. A key policy names
 * the roles with one use by every path that can hold that segment (`rolePatterns`).
 */
export const KEY_USES = {
  /** The service key with `purpose=bank-account`: `decrypt` roles may also encrypt (their IAM policy says which). */
  'bank-account': ['encrypt', 'decrypt'],
  /** The service key through S3 on the role's behalf: the disbursement bucket's objects (SSE-KMS). */
  'disbursement-bucket': ['objects'],
  /** The disbursement file key, `purpose=disbursement-file`: `write` roles seal NACHA files (and open them), `read` roles open them. */
  'disbursement-file': ['write', 'read'],
} as const;
export type KeyUseKind = keyof typeof KEY_USES;
export type KeyUse<K extends KeyUseKind> = (typeof KEY_USES)[K][number];
export type KeyUses = { readonly [K in KeyUseKind]?: KeyUse<K> };

/** The kinds in path order. */
const KINDS = Object.keys(KEY_USES) as KeyUseKind[];

const segment = (kind: KeyUseKind, use: string): string => (kind === 'disbursement-bucket' ? kind : `${kind}-${use}`);

/** `/payroll/<environment>/<stage>/`: every service role with a key use is under it. */
export function serviceRolePathRoot(environment: string, stage: string): string {
  return `/payroll/${environment}/${stage}/`;
}

/** The path of a role with these uses, or `undefined` (the default `/`) for a role with none. */
export function keyUseRolePath(environment: string, stage: string, uses: KeyUses): string | undefined {
  const segments = KINDS.filter((k) => uses[k] !== undefined).map((k) => segment(k, uses[k]!));
  return segments.length === 0 ? undefined : `${serviceRolePathRoot(environment, stage)}${segments.join('/')}/`;
}

/**
 * The `aws:PrincipalArn` patterns (StringLike) of every role whose path holds `kind`'s segment with one of `uses`:
 * one pattern per combination of the kinds before it in the path (each absent or any of its uses), ending in `*` for
 * the kinds after it and the role's name. Exact prefixes, never a `*` in the middle: a role is matched by where its
 * path puts the segment, not by a name that happens to contain it.
 */
export function rolePatterns<K extends KeyUseKind>(
  environment: string,
  stage: string,
  kind: K,
  uses: readonly KeyUse<K>[],
): string[] {
  let prefixes = [''];
  for (const earlier of KINDS.slice(0, KINDS.indexOf(kind))) {
    prefixes = prefixes.flatMap((p) => [p, ...KEY_USES[earlier].map((u) => `${p}${segment(earlier, u)}/`)]);
  }
  return uses.flatMap((use) =>
    prefixes.map(
      (p) =>
        `arn:${Aws.PARTITION}:iam::${Aws.ACCOUNT_ID}:role${serviceRolePathRoot(environment, stage)}${p}${segment(kind, use)}/*`,
    ),
  );
}

interface RenderedStatement {
  readonly Effect?: string;
  readonly Action?: string | string[];
  readonly Condition?: { readonly StringEquals?: Record<string, string | string[]> };
}
const asArray = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/** The Allow statements of the function's access policy, as IAM will read them. */
function allowed(fn: PayrollFunction): RenderedStatement[] {
  const policy = fn.node.tryFindChild('AccessPolicy');
  if (!(policy instanceof Policy)) return [];
  const rendered = policy.document.toJSON() as { Statement?: RenderedStatement | RenderedStatement[] } | undefined;
  return asArray(rendered?.Statement).filter((st) => st.Effect === 'Allow');
}

/** The KMS actions the function may call for data keys with this `purpose`. */
function actionsForPurpose(statements: RenderedStatement[], purpose: KeyPurpose): string[] {
  return statements
    .filter((st) => asArray(st.Condition?.StringEquals?.['kms:EncryptionContext:purpose']).includes(purpose))
    .flatMap((st) => asArray(st.Action));
}
const decrypts = (actions: string[]) => actions.some((a) => a === 'kms:Decrypt' || a.startsWith('kms:ReEncrypt'));
const encrypts = (actions: string[]) => actions.some((a) => a === 'kms:Encrypt' || a.startsWith('kms:GenerateDataKey'));

/**
 * What the function's access policy lets it do with each key, read from the statements themselves (the grants of
 * service-access.ts), so a route that gains or loses an access moves its role without anyone editing a key policy.
 */
export function keyUsesOf(fn: PayrollFunction): KeyUses {
  const statements = allowed(fn);
  const bank = actionsForPurpose(statements, 'bank-account');
  const file = actionsForPurpose(statements, 'disbursement-file');
  // The bucket grants' key statements: the service key, through S3 alone (kms:ViaService s3.<region>…).
  const viaS3 = statements.some(
    (st) =>
      asArray(st.Action).some((a) => a.startsWith('kms:')) &&
      asArray(st.Condition?.StringEquals?.['kms:ViaService']).some((v) => v.startsWith('s3.')),
  );
  return {
    ...(decrypts(bank) ? { 'bank-account': 'decrypt' } : encrypts(bank) ? { 'bank-account': 'encrypt' } : {}),
    ...(viaS3 && { 'disbursement-bucket': 'objects' }),
    ...(encrypts(file) ? { 'disbursement-file': 'write' } : decrypts(file) ? { 'disbursement-file': 'read' } : {}),
  };
}

/**
 * Puts every service function's role under the path of the key uses its access policy grants (`keyUsesOf`), and no
 * other. Added to the app by addPayrollStacks (app.ts); applied at synthesis, after every grant is in.
 */
export class KeyUseRoles implements IAspect {
  constructor(
    private readonly environment: string,
    private readonly stage: string,
  ) {}

  visit(node: IConstruct): void {
    // A PayrollFunction (its role and access policy), recognised by shape: importing the class here would load
    // the route table with the stateful stack.
    const role = node.node.tryFindChild('Role');
    if (!(role instanceof Role) || !(node.node.tryFindChild('AccessPolicy') instanceof Policy)) return;
    const path = keyUseRolePath(this.environment, this.stage, keyUsesOf(node as PayrollFunction));
    if (path) (role.node.defaultChild as CfnRole).path = path;
  }
}
