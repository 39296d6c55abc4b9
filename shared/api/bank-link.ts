import * as z from 'zod';
import { limitParam, pageTokenParam } from '../schemas/common.js';
import {
  CONNECTION_TEST_FAILURES,
  type ConnectionTestView,
  MAX_LISTED_FILES,
  MAX_LISTED_NAME,
  MAX_TEST_MESSAGE,
  TEST_BUDGET,
} from '../use-cases/bank-link/test-connection.js';
import { EXAMPLE_IDS, type Fits, fits, id, int32, page, printable, timestamp } from './common.js';
import { routes } from './route.js';

const inboundFile = z
  .strictObject({
    name: z
      .string()
      .max(255)
      .regex(/^[!-~]+$/)
      .meta({ description: "The file's name on the bank's server" }),
    sha256: z
      .string()
      .max(64)
      .regex(/^[0-9a-f]{64}$/),
    size: int32(0),
    kind: z.enum(['acknowledgement', 'returns', 'unreadable']).meta({
      description:
        "`acknowledgement`: the bank's receipt of a file sent; `returns`: a return / notification-of-change file, applied as `POST /v1/disbursement-returns` applies one; `unreadable`: neither (see `outcome`)",
    }),
    picked_up_at: timestamp,
    file_id: id('file', EXAMPLE_IDS.file).nullable().meta({ description: 'An acknowledgement: the file it is about' }),
    outcome: printable(1000).meta({
      description:
        '`acknowledged`, `rejected_by_bank`, `hash_mismatch` (not the bytes sent), `unknown_file`, `applied`, or why it could not be read',
    }),
    items: z
      .record(z.enum(['applied', 'already_applied', 'unknown_trace', 'amount_mismatch']), int32(0))
      .meta({ description: 'A return file: how many of its items had each outcome' }),
  })
  .meta({ id: 'InboundFile' });

const linkStatus = z
  .strictObject({
    configured: z.boolean().meta({ description: 'Whether `settings.bank_link` is set' }),
    state: z.enum(['ok', 'failing']).nullable().meta({ description: 'The last pass: `null` before the first' }),
    reason: printable(500).nullable().meta({
      description:
        'Why it failed: `host_key_mismatch: …` (nothing was sent), `connection_failed: …`, `transfer_failed: …`',
    }),
    checked_at: timestamp.nullable(),
  })
  .meta({ id: 'BankLinkStatus' });

const remoteDirectory = z
  .string()
  .max(201)
  .regex(/^\/[A-Za-z0-9._/-]*$/);
const hostKeyFingerprint = z
  .string()
  .max(50)
  .regex(/^SHA256:[A-Za-z0-9+/]{43}$/);

const directoryListing = z
  .strictObject({
    dir: remoteDirectory.meta({ description: 'The directory listed, as the link names it' }),
    files: z
      .array(
        z.strictObject({
          name: printable(MAX_LISTED_NAME).meta({
            description: "The file's name on the bank's server (control characters shown as U+FFFD)",
          }),
          size: z.int().min(0).max(Number.MAX_SAFE_INTEGER).meta({ format: 'int64', description: 'Bytes' }),
        }),
      )
      .max(MAX_LISTED_FILES)
      .meta({ description: `Its regular files by name, at most ${MAX_LISTED_FILES}` }),
    truncated: z.boolean().meta({ description: `Whether the directory holds more than ${MAX_LISTED_FILES} files` }),
  })
  .meta({ id: 'BankDirectoryListing' });

const connectionTest = z
  .discriminatedUnion('ok', [
    z.strictObject({
      ok: z.literal(true),
      checked_at: timestamp,
      inbound: directoryListing,
      outbound: directoryListing,
    }),
    z.strictObject({
      ok: z.literal(false),
      checked_at: timestamp,
      reason: z.enum(CONNECTION_TEST_FAILURES).meta({
        description:
          '`host_key_mismatch`: the server presented another host key than the pinned one (the service did not sign in, nothing was sent); `host_refused`: the host is not one the service may reach; `connection_failed`: no session (unreachable, timed out, or the credentials were refused); `listing_failed`: signed in, but a directory could not be listed',
      }),
      message: printable(MAX_TEST_MESSAGE).meta({ description: 'What happened, as the connection reported it' }),
      presented_fingerprint: hostKeyFingerprint
        .optional()
        .meta({ description: '`host_key_mismatch`: the fingerprint of the key the server presented' }),
    }),
  ])
  .meta({
    id: 'BankConnectionTest',
    description:
      "The outcome of one session with the bank's server: `ok` with both directories listed (`inbound`: `remote_inbound_dir`, where files are delivered; `outbound`: `remote_outbound_dir`, where the bank leaves its files), or why not.",
  });
fits<Fits<ConnectionTestView, typeof connectionTest>>(true);

/**
 * The bank link's routes: their own function, which alone unwraps the link's secret (the connection test) and
 * carries the SSH client, loaded on the test's first use.
 */
export const bankLinkRoutes = routes('bank-link-api', {
  getBankLinkStatus: {
    method: 'GET',
    path: '/v1/bank-link',
    scope: 'admin',
    bucket: 'read',
    summary: "The bank link's last pass: whether files reach the bank",
    access: [],
    tag: 'Bank link',
    description:
      "With `settings.bank_link` set, a worker delivers every `ready` file to the bank's inbound directory over SFTP (the host key pinned), and picks up the bank's acknowledgements and return files. This is the outcome of its last pass.",
    success: [
      {
        status: 200,
        description: 'The status',
        schema: linkStatus,
        envelope: 'BankLinkStatusResponse',
        example: { configured: true, state: 'ok', reason: null, checked_at: '2026-11-28T14:00:03.120Z' },
      },
    ],
  },
  listInboundFiles: {
    method: 'GET',
    path: '/v1/bank-link/inbound-files',
    scope: 'admin',
    bucket: 'read',
    summary: 'What the bank link picked up from the bank, each file once, with its outcome',
    access: ['secret:signing'],
    tag: 'Bank link',
    description:
      "Every file the bank link fetched from the bank's outbound directory, by name: acknowledgements (which mark a file `acknowledged`) and return / notification-of-change files (applied through the same intake as `POST /v1/disbursement-returns`, so a file fetched twice applies nothing twice).",
    query: z.strictObject({ limit: limitParam, page_token: pageTokenParam }),
    success: [
      {
        status: 200,
        description: 'One page',
        schema: page('inbound_files', inboundFile),
        envelope: 'InboundFileListResponse',
        example: {
          inbound_files: [
            {
              name: 'RET_20261128T140003Z_file_01kfz8k2d4f6h8k0m2p4r6t8vw.ach',
              sha256: '4f2c9d0e6b1a3c5e7f9a1b3c5d7e9f1a3b5c7d9e1f3a5b7c9d1e3f5a7b9c1d3e',
              size: 940,
              kind: 'returns',
              picked_up_at: '2026-11-28T14:00:03.120Z',
              file_id: null,
              outcome: 'applied',
              items: { applied: 1 },
            },
          ],
          next_page_token: null,
        },
      },
    ],
    errors: { 400: 'An invalid `limit` or an altered or foreign `page_token`' },
  },
  testBankConnection: {
    method: 'POST',
    path: '/v1/bank-link/test',
    scope: 'admin',
    bucket: 'employee_write',
    summary: "Test the bank link: sign in to the bank's server and list both directories",
    access: ['kms:decrypt:bank-account'],
    tag: 'Bank link',
    description: `Opens one SFTP session with the stored link (the host checked and its key pinned as for every pass, then the password or key) and lists \`remote_inbound_dir\` and \`remote_outbound_dir\` (their regular files by name, at most ${MAX_LISTED_FILES} each). Nothing is sent, fetched or marked, and \`GET /v1/bank-link\` still answers the last pass. What the bank's server answered is the outcome, answered 200: \`ok: false\` with a \`reason\` when it could not be reached or listed. Bounded in time: at most ${TEST_BUDGET.connectMs / 1000} s to open the session, ${TEST_BUDGET.totalMs / 1000} s in all. No body.`,
    success: [
      {
        status: 200,
        description: 'The outcome: both listings, or why the server could not be reached or listed',
        schema: connectionTest,
        envelope: 'BankConnectionTestResponse',
        message: 'Connection tested',
        example: {
          ok: true,
          checked_at: '2026-11-28T14:02:11.480Z',
          inbound: {
            dir: '/inbound',
            files: [{ name: 'file_01kfz8k2d4f6h8k0m2p4r6t8vw.ach', size: 1894 }],
            truncated: false,
          },
          outbound: {
            dir: '/outbound',
            files: [{ name: 'file_01kfz8k2d4f6h8k0m2p4r6t8vw.ach.ack', size: 112 }],
            truncated: false,
          },
        },
      },
    ],
    errors: { 409: '`bank_link_not_configured`: the organization has no bank link (`settings.bank_link`)' },
  },
});
