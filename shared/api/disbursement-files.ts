import * as z from 'zod';
import { FILE_STATUSES, FILE_TYPES } from '../domain/money-back.js';
import { fileIdParams, listFilesQuery } from '../schemas/money-back.js';
import type { DisbursementFileView } from '../use-cases/disbursement-files.js';
import { EXAMPLE_IDS, acceptHeader, date, fits, id, int32, page, printable, timestamp, type Fits } from './common.js';
import { exampleFile, MAX_FILE_BLOCKS, MAX_FILE_ENTRIES, NACHA_FILE } from './run-declarations.js';
import { routes } from './route.js';

export const disbursementFile = z
  .strictObject({
    file_id: id('file', EXAMPLE_IDS.file),
    type: z.enum(FILE_TYPES).meta({
      description:
        "`payroll`: a run's deposits (and its funding debit); `redebit`: a re-initiated funding debit (`RETRY PYMT`); `reversal`: debits taking back payments (`REVERSAL`); `prenote`: zero-dollar entries verifying accounts",
    }),
    payroll_id: id('pay', EXAMPLE_IDS.payroll).nullable().meta({ description: 'The run the file was written for' }),
    status: z.enum(FILE_STATUSES).meta({
      description:
        '`ready`: written, to be sent to the bank; `withdrawn`: its run was cancelled or failed, it must never reach a bank; with a bank link, `transmitted` then `acknowledged`',
    }),
    created_at: timestamp,
    effective_entry_date: date.meta({ description: 'The day its entries settle (the batch header)' }),
    release_by: date.meta({ description: 'The banking day by which the file must reach the bank' }),
    file_id_modifier: z
      .string()
      .max(1)
      .regex(/^[A-Z0-9]$/)
      .meta({ description: 'A–Z then 0–9: the n-th file of the organization to this destination that day' }),
    entry_count: int32(1, MAX_FILE_ENTRIES),
    entry_hash: z
      .string()
      .max(10)
      .regex(/^\d{10}$/)
      .meta({ description: 'The NACHA entry hash' }),
    total_credit: z.number().min(0),
    total_debit: z.number().min(0),
    batch_count: int32(1, 1),
    block_count: int32(1, MAX_FILE_BLOCKS),
    transmitted_at: timestamp.nullable().meta({ description: 'When the bank link delivered it (null until then)' }),
    remote_name: z
      .string()
      .max(64)
      .regex(/^file_[0-9a-hjkmnp-tv-z]{26}\.ach$/)
      .nullable()
      .meta({ description: "Its name on the bank's server, once delivered" }),
    acknowledged_at: timestamp.nullable().meta({ description: 'When the bank acknowledged the bytes sent' }),
    late_at: timestamp.nullable().meta({
      description: 'When it was found late: not at the bank by its cut-off, or not acknowledged an hour after',
    }),
    reason: printable(40).nullable().meta({ description: "A reversal's reason; null for other files" }),
  })
  .meta({ id: 'DisbursementFile' });
fits<Fits<DisbursementFileView, typeof disbursementFile>>(true);

export const FILE_EXAMPLE = {
  file_id: EXAMPLE_IDS.file,
  type: 'payroll',
  payroll_id: EXAMPLE_IDS.payroll,
  status: 'ready',
  created_at: '2026-11-17T15:02:27.310Z',
  effective_entry_date: '2026-11-20',
  release_by: '2026-11-19',
  file_id_modifier: 'A',
  entry_count: 2,
  entry_hash: '0042000042',
  total_credit: 2589.5,
  total_debit: 2589.5,
  batch_count: 1,
  block_count: 1,
  transmitted_at: null,
  remote_name: null,
  acknowledged_at: null,
  late_at: null,
  reason: null,
} satisfies z.input<typeof disbursementFile>;

const fileParams = fileIdParams.extend({
  id: fileIdParams.shape.id.meta({ description: 'A file id', example: EXAMPLE_IDS.file }),
});

export const disbursementFileRoutes = routes('disbursements', {
  listDisbursementFiles: {
    method: 'GET',
    path: '/v1/disbursement-files',
    scope: 'read:payroll',
    bucket: 'read',
    summary: 'Every NACHA file the service wrote: payroll, re-debit, reversal, prenote',
    access: ['secret:signing'],
    tag: 'Disbursement files',
    description:
      "The NACHA files written for your organization, newest first: each run's file, and the re-debits and reversals written since. Filter by `type`, `payroll_id`, and creation date (`from`, `to`, UTC). Every file follows the same rules: banking days, a file ID modifier per destination and day, trace numbers never reused across any file, ACH text.",
    query: listFilesQuery,
    success: [
      {
        status: 200,
        description: 'One page',
        schema: page('files', disbursementFile),
        envelope: 'DisbursementFileListResponse',
        example: { files: [FILE_EXAMPLE], next_page_token: null },
      },
    ],
    errors: {
      400: 'An invalid filter (`invalid_date_range` when `from` is after `to`), `limit` or unknown parameter, or an altered or foreign `page_token`',
    },
  },
  getDisbursementFile: {
    method: 'GET',
    path: '/v1/disbursement-files/{id}',
    scope: 'read:payroll',
    bucket: 'read',
    summary: 'A NACHA file, or its control totals',
    access: ['bucket:read', 'kms:decrypt:disbursement-file'],
    tag: 'Disbursement files',
    description:
      'The file itself (`text/plain`, 94-character records), or with `Accept: application/json` what the list shows of it. The file holds full account numbers: it needs the `read:disbursements` scope (admin keys) beside `read:payroll`. A withdrawn file (its run was cancelled or failed) answers 410 `disbursement_withdrawn`.',
    params: fileParams,
    headers: z.object({
      Accept: acceptHeader.optional().meta({
        description: '`application/json` for the control totals; anything else for the file',
        example: 'application/json',
      }),
    }),
    success: [
      {
        status: 200,
        description: 'The NACHA file, or its control totals',
        schema: disbursementFile,
        envelope: 'DisbursementFileResponse',
        example: FILE_EXAMPLE,
        alternatives: {
          'text/plain': {
            description:
              'The NACHA file (`Content-Disposition: attachment; filename="file_….ach"`). It holds full account numbers: it needs the `read:disbursements` scope too (admin keys).',
            scope: { scope: 'read:disbursements', default: true },
            schema: NACHA_FILE,
            get example() {
              return exampleFile();
            },
          },
        },
        headers: {
          'Content-Disposition': {
            description: 'On the file: `attachment; filename="<file_id>.ach"`',
            required: false,
          },
        },
      },
    ],
    errors: {
      403: '`insufficient_scope`: the file (anything but `Accept: application/json`) needs `read:disbursements`',
      404: 'No file with this id in your organization',
      410: '`disbursement_withdrawn`: its run was cancelled or failed; the file must not reach a bank',
    },
  },
});
