/** The time left before `deadline`, as people say it ("in 2 days 3 hours", "in 40 minutes"), or "passed". */
export function timeLeft(deadline: string, now: number, environment: string | null = null): string {
  const ms = Date.parse(deadline) - now;
  if (Number.isNaN(ms)) return '';
  // The sandbox does not enforce the deadline (the API still approves): say so rather than suggest it is too late.
  if (ms <= 0) return environment === 'sandbox' ? 'passed; the sandbox still approves it' : 'passed';
  const minutes = Math.floor(ms / 60_000);
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const mins = minutes % 60;
  const of = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (days > 0) return `in ${of(days, 'day')}${hours > 0 ? ` ${of(hours, 'hour')}` : ''}`;
  if (hours > 0) return `in ${of(hours, 'hour')}${mins > 0 ? ` ${of(mins, 'minute')}` : ''}`;
  if (mins > 0) return `in ${of(mins, 'minute')}`;
  return 'in less than a minute';
}
