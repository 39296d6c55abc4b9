import latinize from 'latinize';

/**
 * The characters every ODFI and ACH operator accepts in a NACHA alphanumeric field (a subset of the rules'), as the
 * body of a RegExp character class: every check of ACH text is built from it.
 */
export const ACH_CHARACTERS = "A-Z0-9 &'\\-.,/";
export const ACH_TEXT = new RegExp(`^[${ACH_CHARACTERS}]*$`);
const NOT_ACH = new RegExp(`[^${ACH_CHARACTERS}]`, 'g');

/**
 * A name or description as ACH text: uppercase A–Z, 0–9, space and `&'-.,/`.
 *
 * - Compatibility forms fold first (full-width `Ａ` → `A`, the ligature `ﬁ` → `FI`).
 * - latinize spells Latin letters that have no mark to lose in their usual way (`Ø` → `O`, `Ł` → `L`, `Æ` → `AE`,
 *   `Œ` → `OE`, `ß` → `SS`, `Đ` → `D`, `Þ` → `TH`), as it does other alphabets that have a standard Latin spelling.
 * - Whatever marks remain are stripped (`É` → `E`); anything else (punctuation outside the set, ideographs,
 *   emoji) becomes a space; runs of spaces collapse and the ends are trimmed.
 *
 * latinize rather than a general transliterator: the contract strips marks (`Ü` → `U`), where German-aware
 * libraries write `UE`, and drops what has no Latin letters rather than guessing a romanisation of it.
 */
export function achText(value: string): string {
  return latinize(value.normalize('NFKC'))
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toUpperCase()
    .replace(NOT_ACH, ' ')
    .replace(/ {2,}/g, ' ')
    .trim();
}

/**
 * A fixed-width NACHA field of ACH text: transliterated, cut to `width`, space-filled. `fallback` (e.g. the
 * employee id) stands in when nothing of the value is left, so a mandatory name is never blank.
 */
export function achField(value: string, width: number, fallback?: string): string {
  let text = achText(value);
  if (text === '' && fallback !== undefined) text = achText(fallback);
  return text.slice(0, width).trimEnd().padEnd(width, ' ');
}
