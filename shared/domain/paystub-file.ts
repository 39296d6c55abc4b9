import { achText } from './ach-text.js';

/** The longest name part of a file name: a 201-character name (two 100-character names) stays readable. */
const MAX_NAME_PART = 60;

/**
 * The words of a name as a file name part: spelt in ASCII as the bank file spells it (`achText`: `Søren Ødegård`
 * → `SOREN ODEGARD`), lowercase, words joined by `-` (`soren-odegard`), apostrophes dropped (`O'Brien` →
 * `obrien`), at most MAX_NAME_PART characters, cut between words where one ends in time. Empty when nothing of
 * the name has a Latin spelling (`山田`).
 */
function nameWords(name: string): string {
  const words = achText(name.replace(/['\u2019]/g, ''))
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  let out = '';
  for (const word of words) {
    const next = out ? `${out}-${word}` : word;
    if (next.length > MAX_NAME_PART) return out || word.slice(0, MAX_NAME_PART);
    out = next;
  }
  return out;
}

/**
 * The name a paystub's PDF is saved under, built the same wherever it is offered: `paystub-<paystub_id>.pdf` (how
 * the API's `Content-Disposition` names it, as shared/api/paystubs.ts documents), or, given the employee's name,
 * `paystub-<name>.pdf` with the name in the bank file's transliteration (`paystub-soren-odegard.pdf`); a name with
 * no Latin spelling falls back to the id. Only `a-z`, `0-9`, `-` and `_` appear: safe in a header and on any disk.
 */
export function paystubFileName(stub: { paystub_id: string; employee_name?: string | null }): string {
  const byName = stub.employee_name ? nameWords(stub.employee_name) : '';
  const id = stub.paystub_id.toLowerCase().replace(/[^a-z0-9_]+/g, '-');
  return `paystub-${byName || id}.pdf`;
}
