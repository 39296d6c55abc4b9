import * as z from 'zod';
import { calendarDate, limitParam, pageTokenParam } from './common.js';

const id = z.string().min(1).max(64);

export const listPaystubsQuery = z
  .strictObject({ employee_id: id.optional(), payroll_id: id.optional(), from: calendarDate.optional(), to: calendarDate.optional(), limit: limitParam, page_token: pageTokenParam })
  .refine((q) => !q.from || !q.to || q.from <= q.to, { message: '`from` must not be after `to`', path: ['to'], params: { code: 'invalid_date_range' } });

export const paystubIdParams = z.object({ id });
