import { isValidRoutingNumber } from './aba.js';

/**
 * What a bank sends back about the deposits of a disbursement file: returns (an R code: the money came back) and
 * notifications of change (a C code: the deposit went through, but the account details should be corrected).
 */

/** The standard reason of each return code a receiving bank may use (NACHA Operating Rules, Appendix Four). */
export const RETURN_REASONS: Readonly<Record<string, string>> = {
  R01: 'Insufficient funds',
  R02: 'Account closed',
  R03: 'No account / unable to locate account',
  R04: 'Invalid account number structure',
  R05: 'Unauthorized debit to consumer account using corporate SEC code',
  R06: "Returned per ODFI's request",
  R07: 'Authorization revoked by customer',
  R08: 'Payment stopped',
  R09: 'Uncollected funds',
  R10: 'Customer advises originator is not known to receiver or not authorized',
  R11: 'Customer advises entry not in accordance with the terms of the authorization',
  R12: 'Account sold to another DFI',
  R13: 'Invalid ACH routing number',
  R14: 'Representative payee deceased or unable to continue in that capacity',
  R15: 'Beneficiary or account holder deceased',
  R16: 'Account frozen / entry returned per OFAC instruction',
  R17: 'File record edit criteria / entry with invalid account number initiated under questionable circumstances',
  R18: 'Improper effective entry date',
  R19: 'Amount field error',
  R20: 'Non-transaction account',
  R21: 'Invalid company identification',
  R22: 'Invalid individual ID number',
  R23: 'Credit entry refused by receiver',
  R24: 'Duplicate entry',
  R25: 'Addenda error',
  R26: 'Mandatory field error',
  R27: 'Trace number error',
  R28: 'Routing number check digit error',
  R29: 'Corporate customer advises not authorized',
  R30: 'RDFI not participant in check truncation program',
  R31: 'Permissible return entry (CCD and CTX only)',
  R32: 'RDFI non-settlement',
  R33: 'Return of XCK entry',
  R34: 'Limited participation DFI',
  R35: 'Return of improper debit entry',
  R36: 'Return of improper credit entry',
  R37: 'Source document presented for payment',
  R38: 'Stop payment on source document',
  R39: 'Improper source document / source document presented for payment',
  R40: 'Return of ENR entry by federal government agency',
  R41: 'Invalid transaction code (ENR only)',
  R42: 'Routing number / check digit error (ENR only)',
  R43: 'Invalid DFI account number (ENR only)',
  R44: 'Invalid individual ID number / identification number (ENR only)',
  R45: 'Invalid individual name / company name (ENR only)',
  R46: 'Invalid representative payee indicator (ENR only)',
  R47: 'Duplicate enrollment (ENR only)',
  R50: 'State law affecting RCK acceptance',
  R51: 'Item related to RCK entry is ineligible or RCK entry is improper',
  R52: 'Stop payment on item related to RCK entry',
  R53: 'Item and RCK entry presented for payment',
  R80: 'IAT entry coding error',
  R81: 'Non-participant in IAT program',
  R82: 'Invalid foreign receiving DFI identification',
  R83: 'Foreign receiving DFI unable to settle',
  R84: 'Entry not processed by gateway',
  R85: 'Incorrectly coded outbound international payment',
};

export const isReturnCode = (code: string): boolean => Object.hasOwn(RETURN_REASONS, code);

/**
 * R61–R77 are not returns of an entry but what follows one (a misrouted, dishonored or contested return): applied
 * as a return, they would count money back that the return did not bring. They are settled with the bank.
 */
export const isDishonoredOrContested = (code: string): boolean => /^R(6[1-9]|7[0-7])$/.test(code);

/** The account is closed, does not exist or cannot be valid: no further deposit may go to it. */
export const ACCOUNT_UNUSABLE_CODES: readonly string[] = ['R02', 'R03', 'R04'];

/** Notifications of change the service applies to an employee's bank account, and what each corrects. */
export const CORRECTIONS = {
  C01: 'Incorrect account number',
  C02: 'Incorrect routing number',
  C03: 'Incorrect routing number and account number',
  C05: 'Incorrect account type (checking or savings)',
  C06: 'Incorrect account number and account type',
  C07: 'Incorrect routing number, account number and account type',
} as const;
export type CorrectionCode = keyof typeof CORRECTIONS;
export const isCorrectionCode = (code: string): code is CorrectionCode => Object.hasOwn(CORRECTIONS, code);

export type AccountType = 'checking' | 'savings';

/** What a notification of change says the account is: only the fields its code corrects. */
export interface CorrectedAccount {
  routing_number?: string;
  account_number?: string;
  account_type?: AccountType;
}

export interface ReturnItem {
  type: 'return';
  /** The 15-digit trace number of the entry the service sent. */
  trace_number: string;
  code: string;
  /** 1-based line of the addenda record, when the item came from a file. */
  line?: number;
  /** The company identification of the batch it came in (a file): it must be the run's originator. */
  company_identification?: string;
  /** The returned entry's amount in cents, when the item came from a file: it must be the original entry's. */
  amount_cents?: number;
}

export interface CorrectionItem {
  type: 'correction';
  trace_number: string;
  /** A code of `CORRECTIONS` is applied to the account; another change code (C04, C09…) is only recorded. */
  code: string;
  corrected: CorrectedAccount;
  line?: number;
  company_identification?: string;
  /** Corrected data the service cannot apply (an account number with letters…): recorded, never applied. */
  unusable?: string;
  /** Never set from a file: a notification of change moves no money, its entry's amount is zero by rule. */
  amount_cents?: number;
}

export type BankReportItem = ReturnItem | CorrectionItem;

/** `amount_mismatch`: a return whose amount is not the original entry's is not about that deposit, and not applied. */
export type ReportOutcome = 'applied' | 'unknown_trace' | 'already_applied' | 'amount_mismatch';

/** The account type a transaction code names: 2x checking, 3x savings. */
function accountTypeOf(code: string): AccountType | undefined {
  if (!/^[23][1-9]$/.test(code)) return undefined;
  return code[0] === '2' ? 'checking' : 'savings';
}

const ACCOUNT = /^\d{4,17}$/;

/**
 * The corrected data field (29 characters) of a notification of change, by change code. Fields are separated by
 * blanks where the layout leaves room for them, so the reading splits on blanks as banks' own software does.
 */
export function parseCorrectedData(code: string, field: string): CorrectedAccount | string {
  const parts = field.trim().split(/\s+/).filter(Boolean);
  const problems: string[] = [];
  const out: CorrectedAccount = {};
  const routing = (value = '') => {
    if (isValidRoutingNumber(value)) out.routing_number = value;
    else problems.push(`the corrected routing number "${value}" is not valid`);
  };
  const account = (value = '') => {
    if (ACCOUNT.test(value)) out.account_number = value;
    else problems.push('the corrected account number must be 4 to 17 digits');
  };
  const type = (value = '') => {
    const accountType = accountTypeOf(value);
    if (accountType) out.account_type = accountType;
    else problems.push(`the corrected transaction code "${value}" is not a checking or savings code`);
  };
  switch (code) {
    case 'C01':
      account(parts[0]);
      break;
    case 'C02':
      routing(parts[0]);
      break;
    case 'C03':
      routing(parts[0]);
      account(parts[1]);
      break;
    case 'C05':
      type(parts[0]);
      break;
    case 'C06':
      account(parts[0]);
      type(parts[1]);
      break;
    case 'C07': {
      // Routing (1-9), account (10-26) and transaction code (27-28), with no blank between the first two. Some
      // banks' software right-aligns the code in the field instead: blanks then separate account and code.
      routing(field.slice(0, 9));
      const rest = field.slice(9).trim().split(/\s+/);
      if (rest.length === 2) {
        account(rest[0]);
        type(rest[1]);
      } else {
        account(field.slice(9, 26).trim());
        type(field.slice(26, 28).trim());
      }
      break;
    }
    default:
      break; // a change the service records but does not apply (a name, an identification number…)
  }
  return problems.length > 0 ? problems.join('; ') : out;
}
