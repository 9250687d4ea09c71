// Runs a Node child for the exit and trigger tests: a script given as text,
// signals sent when a marker line shows up in its output (never on a clock).
import { spawn } from 'node:child_process';

export interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** When `marker` has appeared in the child's output (stdout and stderr), send it `signal`. */
export interface Step {
  marker: string;
  signal: NodeJS.Signals;
}

export function runChild(
  script: string,
  options: { steps?: Step[]; args?: string[]; cwd?: string } = {},
): Promise<ChildResult> {
  const steps = options.steps ?? [];
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [...(options.args ?? []), '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: options.cwd,
    });
    let stdout = '';
    let stderr = '';
    let next = 0;
    const advance = (): void => {
      while (next < steps.length && (stdout + stderr).includes(steps[next].marker)) c.kill(steps[next++].signal);
    };
    c.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      advance();
    });
    c.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      advance();
    });
    c.on('error', reject);
    c.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}
