import * as z from 'zod';
import { limitParam, pageTokenParam } from '../schemas/common.js';
import { EXAMPLE_IDS, id, int32, page, printable, timestamp } from './common.js';
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

export const bankLinkRoutes = routes('admin', {
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
});
