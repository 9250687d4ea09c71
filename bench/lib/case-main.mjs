// The end of every bench/cases script: run main (sync or async), exit 0, or
// print the error's stack and exit 1 (run.mjs reports the stderr tail).
export function runCase(main) {
  Promise.resolve()
    .then(main)
    .then(
      () => process.exit(0),
      (e) => {
        process.stderr.write(`${e && e.stack ? e.stack : e}\n`);
        process.exit(1);
      },
    );
}
