/** `payroll-processing` → `PayrollProcessing`, `getEmployee` → `GetEmployee`: for construct ids, output keys and Sids. */
export function pascal(name: string): string {
  return name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');
}
