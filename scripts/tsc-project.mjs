// Compiles one TypeScript project of the repository (and the projects it references) with `tsc -b`,
// for the few plain-Node entry points that run compiled code straight from a clone (the `mnemo`
// command, the Kubernetes manifests' generator). tsc -b is incremental: a no-op when dist/ is current.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** `tsconfig`: a file URL or path of the project's tsconfig.json. Throws (tsc's errors on stderr) when it does not compile. */
export function compileProject(tsconfig) {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const path = tsconfig instanceof URL ? fileURLToPath(tsconfig) : tsconfig;
  execFileSync(process.execPath, [tsc, '-b', path], { stdio: ['ignore', 'inherit', 'inherit'] });
}
