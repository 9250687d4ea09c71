// What every command shares with main.ts, which loads the commands: the
// Command shape, the exit codes and the usage error.

export interface Command {
  help: string;
  run(argv: string[]): number | Promise<number>;
}

export const EXIT_OK = 0;

export const EXIT_FAILURE = 1;

export const EXIT_USAGE = 2;

export class UsageError extends Error {}
