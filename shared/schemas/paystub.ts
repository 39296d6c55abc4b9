import * as z from 'zod';
import { calendarDate, limitParam, lookupId, pageTokenParam } from './common.js';

const id = lookupId;

export const listPaystubsQuery = z
  .strictObject({
    employee_id: id.optional().meta({ description: "Only this employee's paystubs" }),
    payroll_id: id.optional().meta({ description: "Only this run's paystubs" }),
    from: calendarDate.optional().meta({ description: 'Paystubs whose pay period ends on or after this date' }),
    to: calendarDate.optional().meta({ description: 'Paystubs whose pay period starts on or before this date' }),
    limit: limitParam,
    page_token: pageTokenParam,
  })
  .refine((q) => !q.from || !q.to || q.from <= q.to, {
    message: '`from` must not be after `to`',
    path: ['to'],
    params: { code: 'invalid_date_range' },
  });

export const paystubIdParams = z.object({ id });
