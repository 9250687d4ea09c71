// The committed WebAssembly core's digest (native/wasm/hotspan_core.wasm.digest,
// scripts/wasm-digest.mjs): `check` needs no compiler, so a change to any file
// the .wasm was built from fails `npm test` on every machine. Each case runs the
// real script on a copy of the files the digest lists.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const root = path.join(__dirname, '..');
const DIGEST = 'native/wasm/hotspan_core.wasm.digest';
const WASM = 'native/wasm/hotspan_core.wasm';
const digest = JSON.parse(readFileSync(path.join(root, DIGEST), 'utf8')) as { files: Record<string, string>; sha256: string };

let tmp: string;

beforeEach(() => {
  tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-wasm-digest-'));
  for (const f of [...Object.keys(digest.files), WASM, DIGEST, 'scripts/wasm-digest.mjs']) {
    cpSync(path.join(root, f), path.join(tmp, f));
  }
});

afterEach(() => {
  rmSync(tmp, { recursive: true, force: true });
});

function check(): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [path.join(tmp, 'scripts', 'wasm-digest.mjs'), 'check'], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

describe('the wasm digest check', () => {
  it('lists the build script, the .cc files and the headers they include', () => {
    const files = Object.keys(digest.files);
    expect(files).toContain('scripts/build-wasm.sh');
    expect(files).toContain('native/core/write/perfetto_writer.cc');
    expect(files).toContain('native/core/write/perfetto_writer.h');
    expect(files).toContain('native/wasm/from_chars_double.h');
    for (const h of Object.values(digest.files)) expect(h).toMatch(/^[0-9a-f]{64}$/);
  });

  it('passes on the files as committed', () => {
    const r = check();
    expect(r.out).toContain(`matches the ${String(Object.keys(digest.files).length)} files it was built from`);
    expect(r.status).toBe(0);
  });

  it('fails when a core source changed, naming it and npm run build:wasm', () => {
    const f = path.join(tmp, 'native/core/read/stats.cc');
    writeFileSync(f, `${readFileSync(f, 'utf8')}\n// changed\n`);
    const r = check();
    expect(r.status).toBe(1);
    expect(r.out).toContain('native/core/read/stats.cc changed since native/wasm/hotspan_core.wasm was built');
    expect(r.out).toContain('run npm run build:wasm');
    expect(r.out).not.toContain('perfetto_writer.cc changed');
  });

  it('fails when a header, the build script (its flags and sources) or the .wasm changed', () => {
    for (const f of ['native/core/record/span_record.h', 'scripts/build-wasm.sh']) {
      writeFileSync(path.join(tmp, f), `${readFileSync(path.join(tmp, f), 'utf8')} `);
    }
    const wasm = readFileSync(path.join(tmp, WASM));
    wasm[wasm.length - 1] ^= 1;
    writeFileSync(path.join(tmp, WASM), wasm);
    const r = check();
    expect(r.status).toBe(1);
    expect(r.out).toContain('native/core/record/span_record.h changed');
    expect(r.out).toContain('scripts/build-wasm.sh changed');
    expect(r.out).toContain(`${WASM} is not the file ${DIGEST} describes`);
  });

  it('fails when a listed file or the digest is missing', () => {
    unlinkSync(path.join(tmp, 'native/wasm/exports.cc'));
    expect(check().out).toContain('native/wasm/exports.cc (built into the .wasm) is missing');
    unlinkSync(path.join(tmp, DIGEST));
    const r = check();
    expect(r.status).toBe(1);
    expect(r.out).toContain(`${DIGEST} is missing`);
  });

  it('reads CRLF line endings as LF (a checkout that converts them passes)', () => {
    const f = path.join(tmp, 'native/core/read/stats.cc');
    writeFileSync(f, readFileSync(f, 'utf8').replace(/\n/g, '\r\n'));
    expect(check().status).toBe(0);
  });
});
