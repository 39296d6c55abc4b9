import { gzipSync } from 'node:zlib';
import { relative } from 'node:path';
import { bundleDashboard, DASHBOARD_DIST, writeDashboard } from '../dashboard/build.js';

/**
 * `npm run build:dashboard`: the developer dashboard into dashboard/dist, with each file's size. The local stack
 * does not need it (it builds in memory on demand) and neither does `cdk synth` (it bundles the site asset
 * itself); it is for looking at the output or hosting it elsewhere.
 */
const started = performance.now();
const files = await bundleDashboard();
writeDashboard(files, DASHBOARD_DIST);
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
for (const file of files.sort((a, b) => a.path.localeCompare(b.path))) {
  if (file.path.endsWith('.map')) continue;
  process.stdout.write(
    `  ${file.path.padEnd(34)} ${kb(file.contents.length).padStart(9)}  (gzip ${kb(gzipSync(file.contents).length)})\n`,
  );
}
process.stdout.write(
  `Dashboard built into ${relative(process.cwd(), DASHBOARD_DIST) || '.'} in ${Math.round(performance.now() - started)} ms\n`,
);
