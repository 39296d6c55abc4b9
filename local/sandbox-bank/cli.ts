import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startSandboxBank } from './index.js';

/**
 * `npm run sandbox-bank`: the sandbox bank on its own, for a deployed sandbox stage to point its organizations'
 * links at (the local stack runs one itself). It answers each delivered file with an acknowledgement and returns the
 * deposits to account 000000000 (R03), as on the local stack, so the sandbox's returned deposit works deployed too.
 */
const USAGE = `Usage: npm run sandbox-bank -- --account <username> [--account <username> …] [options]

  --account <name>      an SFTP account (one per organization); its password is printed once at start
  --port <n>            the port to listen on (default 2222)
  --listen <address>    the address to listen on (default 127.0.0.1; 0.0.0.0 to be reached from AWS)
  --host-key ecdsa      an ECDSA host key, which Transfer Family connectors can trust (default ed25519)
  --data-dir <dir>      where its host key, PGP key and accounts' files live (default .sandbox-bank)`;

const { values } = parseArgs({
  options: {
    account: { type: 'string', multiple: true, default: [] },
    port: { type: 'string', default: '2222' },
    listen: { type: 'string', default: '127.0.0.1' },
    'host-key': { type: 'string', default: 'ed25519' },
    'data-dir': { type: 'string', default: '.sandbox-bank' },
    help: { type: 'boolean', short: 'h' },
  },
});
const port = Number(values.port);
const hostKeyType = values['host-key'];
if (
  values.help ||
  values.account.length === 0 ||
  !Number.isInteger(port) ||
  port < 0 ||
  port > 65_535 ||
  (hostKeyType !== 'ed25519' && hostKeyType !== 'ecdsa')
) {
  process.stderr.write(`${USAGE}\n`);
  process.exit(values.help ? 0 : 2);
}

const bank = await startSandboxBank({
  dataDir: resolve(values['data-dir']),
  port,
  host: values.listen,
  hostKeyType,
  onEvent: (e) => process.stderr.write(`${JSON.stringify(e)}\n`),
});
const lines = [
  `Sandbox bank listening on ${values.listen}:${bank.port}`,
  `  host_key_fingerprint: ${bank.hostKeyFingerprint}`,
  '  remote_inbound_dir: /inbound   remote_outbound_dir: /outbound',
];
for (const username of values.account) {
  // Held in memory only: a restart prints new ones, to be set again on the links.
  const password = randomBytes(18).toString('base64url');
  await bank.addAccount(username, password);
  lines.push(`  account ${username}: password ${password}`);
}
lines.push(`  PGP public key (optional pgp_public_key):\n${bank.pgpPublicKey}`);
process.stdout.write(`${lines.join('\n')}\n`);
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => void bank.stop().then(() => process.exit(0)));
