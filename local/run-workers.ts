import { dataDir, handlerEnvironment, localSecrets, readState } from './stack-state.js';
import { startLocalWorkers } from './workers.js';

/**
 * `npm run workers`: the queue consumers in a process of their own, for a local stack started with
 * PAYROLL_LOCAL_WORKERS=external (several may run side by side, as Lambda runs several containers).
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const dir = dataDir();
const state = readState(dir);
if (!state) {
  process.stderr.write(`npm run workers: no local stack is running from ${dir}: start it with \`npm start\` first\n`);
  process.exit(1);
}
Object.assign(process.env, handlerEnvironment(state, localSecrets(dir)));
const workers = await startLocalWorkers(state);
process.stdout.write(`Workers polling ${state.queues.payroll} (pid ${process.pid})\n`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void Promise.all(workers.map((w) => w.stop())).then(() => process.exit(0)));
}
