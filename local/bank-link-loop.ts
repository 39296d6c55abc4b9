import { join } from 'node:path';
import type { ServedOrganization } from '../functions/bank-link/serve-bank-links.js';
import { startSandboxBank, type SandboxBank } from './sandbox-bank/index.js';
import { isSandboxLink, sandboxBankAccount } from './sandbox-bank-link.js';
import type { LocalSecrets } from './stack-state.js';
import { asFunction } from './table-guard.js';

/**
 * The local stack's bank: the sandbox bank (an SFTP server over the data folder) and the bank-link worker's passes on
 * a timer, as EventBridge Scheduler runs them deployed. Every sandbox organization gets a link to it when created
 * (`npm run admin -- org create`), under its own account: the files its runs produce are delivered there, and the
 * acknowledgements and returns it writes come back through the one returns intake.
 */

/** How often organizations with open files are served (the bank's acknowledgement and returns follow in a second). */
const QUICK_EVERY_MS = 1_000;
/**
 * Every organization with a link, for files the bank leaves later (deployed: every minute, all of them). The sandbox
 * bank answers a file as it arrives, which the quick passes pick up: this one is for the rest (late files, status).
 */
const FULL_EVERY_MS = 120_000;
/** An organization whose pass failed waits this long before the quick passes try it again. */
const FAILED_WAIT_MS = 30_000;

export interface LocalBankLink {
  bank: SandboxBank;
  /** Starts the passes (after the API and workers are up). */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startLocalBankLink(options: {
  dataDir: string;
  port: number;
  secrets: LocalSecrets;
  log: (line: string) => void;
}): Promise<LocalBankLink> {
  const bank = await startSandboxBank({
    dataDir: join(options.dataDir, 'sandbox-bank'),
    port: options.port,
    // Each organization's account opens on its first sign-in, with the password only this stack derives.
    accountPassword: (username) =>
      username.startsWith('org_') ? sandboxBankAccount(options.secrets, username).password : undefined,
    onEvent: (e) => options.log(`sandbox bank: ${JSON.stringify(e)}`),
  });
  const failedAt = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  // The first full pass a while after start: what a restart left open is served by the quick passes at once.
  let lastFull = Date.now();

  // Loaded once the handler environment is in place (the worker module reads it at import).
  const worker = () => import('../functions/bank-link/serve-bank-links.js');

  const pass = async () => {
    const { serveLinkedOrganizations, services } = await worker();
    const now = Date.now();
    const full = now - lastFull >= FULL_EVERY_MS;
    let only: Set<string> | undefined;
    if (full) lastFull = now;
    else {
      only = new Set(
        [...(await services.bankLinks.organizationsWithOpenFiles())].filter(
          (orgId) => now - (failedAt.get(orgId) ?? 0) >= FAILED_WAIT_MS,
        ),
      );
      if (only.size === 0) return;
    }
    const outcomes: ServedOrganization[] = await serveLinkedOrganizations(only && { only });
    for (const o of outcomes) {
      if (o.failure) failedAt.set(o.organization_id, Date.now());
      else failedAt.delete(o.organization_id);
    }
  };

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = asFunction('bank-link', pass)
        .catch((err: unknown) => options.log(`bank link: ${String(err)}`))
        .finally(schedule);
    }, QUICK_EVERY_MS);
    timer.unref();
  };

  return {
    bank,
    async start() {
      // Links made under an earlier run of the stack point at the port the bank had then.
      const { services, organizations } = await worker();
      await asFunction('bank-link', async () => {
        for (const { organizationId, settings } of await services.bankLinks.withBankLinks()) {
          const link = settings.bank_link!;
          if (isSandboxLink(organizationId, link, bank.hostKeyFingerprint) && link.port !== bank.port)
            await organizations.putSettings(
              organizationId,
              { ...settings, bank_link: { ...link, port: bank.port } },
              settings.updated_at,
            );
        }
      });
      schedule();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      await bank.stop();
    },
  };
}
