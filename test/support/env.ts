// Environment variables a test file sets: each is put back as it was (or
// removed) after every test, so no value leaks into the next test.
import { afterEach } from 'vitest';

export function restoreEnvAfterEach(names: readonly string[]): void {
  const saved = names.map((name) => [name, process.env[name]] as const);
  afterEach(() => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
}
