// The system tools some suites need beyond Node: a C++ compiler (the suites
// that build their own addon with node-gyp, which runs $CXX or g++), protoc
// (Google's protobuf decoder, protobuf-compiler), Chromium (the view page),
// and the PostgreSQL, Redis and MariaDB servers hotspan/auto's database
// instruments are tested against (test/support/pg-server.ts,
// test/support/redis-server.ts, test/support/mysql-server.ts).
// One rule for every suite: a case that needs a missing tool is skipped, with
// one line saying what and why, in `npm test`; where tools are required
// (`npm run test:all`, which sets HOTSPAN_REQUIRE_TOOLS=1, or CI=true) it runs
// and fails with the reason instead.
//
//   describe.skipIf(without('chromium'))('the view', () => { ... });
//   spawnSync(toolBin('protoc'), ...)  // inside a case: skips it when missing
import { accessSync, constants, readdirSync } from 'node:fs';
import * as path from 'node:path';

import { getCurrentTest } from 'vitest/suite';

export type ToolName = 'c++' | 'protoc' | 'chromium' | 'postgres' | 'redis-server' | 'mariadbd';

/** Whether a missing tool fails its cases instead of skipping them. */
export const toolsRequired = process.env.CI === 'true' || process.env.HOTSPAN_REQUIRE_TOOLS === '1';

const HOW: Record<ToolName, { env: string; bin: string; install: string }> = {
  // What node-gyp's Makefile runs: $CXX, else make's default g++.
  'c++': { env: 'CXX', bin: 'g++', install: 'apt-get install g++' },
  protoc: { env: 'HOTSPAN_PROTOC', bin: 'protoc', install: 'apt-get install protobuf-compiler' },
  chromium: { env: 'HOTSPAN_CHROMIUM', bin: '/usr/bin/chromium', install: 'apt-get install chromium' },
  // Debian keeps the server's binaries (postgres, initdb) out of PATH: the newest /usr/lib/postgresql/<v>/bin.
  postgres: { env: 'HOTSPAN_POSTGRES', bin: newestPostgres(), install: 'apt-get install postgresql' },
  'redis-server': { env: 'HOTSPAN_REDIS_SERVER', bin: 'redis-server', install: 'apt-get install redis-server' },
  // Debian keeps the server (mariadbd) in /usr/sbin, out of a user's PATH; mariadb-install-db is beside it or in /usr/bin.
  mariadbd: { env: 'HOTSPAN_MARIADBD', bin: '/usr/sbin/mariadbd', install: 'apt-get install mariadb-server' },
};

function newestPostgres(): string {
  let versions: string[] = [];
  try {
    versions = readdirSync('/usr/lib/postgresql').filter((v) => /^\d+$/.test(v));
  } catch {
    // No Debian server package: only a postgres on PATH.
  }
  const v = versions.sort((a, b) => Number(b) - Number(a))[0];
  return v === undefined ? 'postgres' : `/usr/lib/postgresql/${v}/bin/postgres`;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The tool's executable: its HOTSPAN_* variable, else a bare name looked up on PATH, else the fixed path. */
export function toolPath(tool: ToolName): string {
  const { env, bin } = HOW[tool];
  const chosen = process.env[env] ?? bin;
  if (chosen.includes('/')) return chosen;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && executable(path.join(dir, chosen))) return path.join(dir, chosen);
  }
  return chosen;
}

/** Why the tool cannot be used here, or null when it can. */
export function toolMissing(tool: ToolName): string | null {
  const file = toolPath(tool);
  if (executable(file)) return null;
  const { env, install } = HOW[tool];
  return `${tool} not found at ${file} (${install}, or set ${env})`;
}

const warned = new Set<ToolName>();

function warnOnce(tool: ToolName, why: string): void {
  if (warned.has(tool)) return;
  warned.add(tool);
  console.warn(`SKIPPED the cases that need ${tool}: ${why}`);
}

/**
 * For `it.skipIf` / `describe.skipIf`: true when the tool is missing and tools
 * are not required (the first time, one line says what is skipped and why);
 * false when the cases should run, including when they will fail for the
 * missing tool because tools are required.
 */
export function without(tool: ToolName): boolean {
  const why = toolMissing(tool);
  if (why === null || toolsRequired) return false;
  warnOnce(tool, why);
  return true;
}

/**
 * The tool's path, for a case about to run it. When it is missing, the
 * running case is skipped with the reason as its note (one line says so), or,
 * where tools are required or outside a case, this throws the reason.
 */
export function toolBin(tool: ToolName): string {
  const why = toolMissing(tool);
  if (why === null) return toolPath(tool);
  const test = getCurrentTest();
  if (toolsRequired || test === undefined) {
    throw new Error(toolsRequired ? `${why}; tools are required under npm run test:all and CI=true` : why);
  }
  warnOnce(tool, why);
  return test.context.skip(`needs ${why}`);
}
