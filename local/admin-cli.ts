import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { systemDeps } from '../shared/adapters/clock.js';
import { createDocumentClient, type TableRef } from '../shared/adapters/dynamo.js';
import type { Environment } from '../shared/adapters/tokens.js';
import { ApiKeyRepository } from '../shared/data/api-key-repository.js';
import { OrganizationRepository } from '../shared/data/organization-repository.js';
import { TOKEN_TYPES, type TokenType } from '../shared/domain/scopes.js';
import { createApiKey, createOrganization } from '../shared/use-cases/api-keys.js';
import { fieldEncryptor } from '../shared/adapters/envelope-encryption.js';
import { updateSettings } from '../shared/use-cases/settings.js';
import { sandboxBankLink } from './sandbox-bank-link.js';
import {
  dataDir,
  handlerEnvironment,
  isAlive,
  type LocalSecrets,
  localSecrets,
  readState,
  type StackState,
} from './stack-state.js';

/**
 * The operator's CLI. Against the local stack it finds the engines through the data folder's stack.json (the
 * stack must be running); with --stack it acts on a deployed stack through the AWS credentials in the
 * environment and the stack's CloudFormation outputs. --json writes the JSON alone on stdout.
 */
const USAGE = `Usage:
  admin org create --name <name> [--json] [--without-bank-link] [--stack <stateful stack name> --environment sandbox|production]
  admin token create --org <organization_id> --type ${TOKEN_TYPES.join('|')} [--name <name>] [--expires-at <ISO 8601>] [--json] [--stack …]`;

class UsageError extends Error {}

interface Target {
  table: TableRef;
  environment: Environment;
  /** The local stack's state and secrets (not for a deployed stack). */
  local?: { state: StackState; secrets: LocalSecrets };
}

async function resolveTarget(stack: string | undefined, environmentFlag: string | undefined): Promise<Target> {
  if (stack) {
    const out = await new CloudFormationClient({}).send(new DescribeStacksCommand({ StackName: stack }));
    const outputs = out.Stacks?.[0]?.Outputs ?? [];
    const tableName = outputs.find((o) => o.OutputKey?.startsWith('TableName'))?.OutputValue;
    if (!tableName) throw new Error(`Stack ${stack} has no TableName output: pass the stateful stack's name`);
    const environment = (environmentFlag ??
      outputs.find((o) => o.OutputKey?.startsWith('Environment'))?.OutputValue ??
      'sandbox') as Environment;
    return { table: { doc: createDocumentClient(new DynamoDBClient({})), tableName }, environment };
  }
  const dir = dataDir();
  const state = readState(dir);
  if (!state || !isAlive(state.pid)) {
    throw new Error(
      `The local stack is not running for data folder ${dir}: start it with \`npm start\` (same PAYROLL_DATA_DIR)`,
    );
  }
  const client = new DynamoDBClient({
    endpoint: state.dynamodb_endpoint,
    region: state.region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  return {
    table: { doc: createDocumentClient(client), tableName: state.table_name },
    environment: state.environment,
    local: { state, secrets: localSecrets(dir) },
  };
}

function print(json: boolean, value: Record<string, unknown>, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${human}\n`);
}

export async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      org: { type: 'string' },
      type: { type: 'string' },
      'expires-at': { type: 'string' },
      json: { type: 'boolean', default: false },
      stack: { type: 'string' },
      environment: { type: 'string' },
      'without-bank-link': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [noun, verb] = positionals;
  if (values.help || !noun) throw new UsageError(USAGE);
  if (values.environment && values.environment !== 'sandbox' && values.environment !== 'production') {
    throw new UsageError('--environment must be sandbox or production');
  }

  if (noun === 'org' && verb === 'create') {
    const name = values.name?.trim();
    if (!name || name.length > 100) throw new UsageError('org create needs --name (1 to 100 characters)');
    const target = await resolveTarget(values.stack, values.environment);
    const organizations = new OrganizationRepository(target.table);
    const result = await createOrganization(organizations, systemDeps, { name, environment: target.environment });
    // A sandbox organization of the local stack is linked to its sandbox bank: its files are delivered there, and the
    // bank's acknowledgements and returns come back by themselves.
    if (target.local && target.environment === 'sandbox' && !values['without-bank-link']) {
      const { state, secrets } = target.local;
      Object.assign(process.env, handlerEnvironment(state, secrets));
      await updateSettings(
        { organizations, deps: systemDeps, encryptor: fieldEncryptor('bank-account') },
        { organizationId: result.organization_id, environment: 'sandbox' },
        { bank_link: sandboxBankLink(state.sandbox_bank, secrets, result.organization_id) },
      );
    }
    print(
      values.json,
      result,
      `Organization ${result.organization_id} created.\nAdmin token (shown once, store it in a secret manager):\n  ${result.token}`,
    );
    return;
  }

  if (noun === 'token' && verb === 'create') {
    if (!values.org) throw new UsageError('token create needs --org <organization_id>');
    if (!values.type || !TOKEN_TYPES.includes(values.type as TokenType))
      throw new UsageError(`token create needs --type ${TOKEN_TYPES.join('|')}`);
    const expiresAt = values['expires-at'];
    if (expiresAt !== undefined && (Number.isNaN(Date.parse(expiresAt)) || Date.parse(expiresAt) <= Date.now())) {
      throw new UsageError('--expires-at must be an ISO 8601 date-time in the future');
    }
    const target = await resolveTarget(values.stack, values.environment);
    const organizations = new OrganizationRepository(target.table);
    const org = await organizations.get(values.org);
    if (!org) throw new Error(`No organization ${values.org}`);
    const { record, token } = await createApiKey(
      new ApiKeyRepository(target.table),
      systemDeps,
      org.organization_id,
      org.environment,
      {
        name: values.name ?? `${values.type} key`,
        type: values.type as TokenType,
        expires_at: expiresAt ?? null,
      },
    );
    print(
      values.json,
      { api_key_id: record.api_key_id, token, type: record.type, scopes: record.scopes, expires_at: record.expires_at },
      `API key ${record.api_key_id} (${record.type}: ${record.scopes.join(' ')}) created.\nToken (shown once):\n  ${token}`,
    );
    return;
  }

  throw new UsageError(USAGE);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  main(process.argv.slice(2)).catch((err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`${err instanceof UsageError ? message : `error: ${message}`}\n`);
    process.exit(err instanceof UsageError ? 2 : 1);
  });
}
