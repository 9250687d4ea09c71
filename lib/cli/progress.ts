// A progress bar on a terminal for work that has taken over a second; nothing
// when the stream is not a TTY (piped, redirected, in CI).

/** ms before the bar shows; HOTSPAN_PROGRESS_DELAY_MS changes it (tests). */
function delayMs(): number {
  const v = Number(process.env.HOTSPAN_PROGRESS_DELAY_MS);
  return Number.isFinite(v) && v >= 0 ? v : 1000;
}

const REDRAW_MS = 100;
const WIDTH = 30;

export class Progress {
  private readonly started = Date.now();
  private readonly delay = delayMs();
  private drawnAt = 0;
  private shown = false;

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly label: string,
  ) {}

  update(done: number, total: number): void {
    if (this.stream.isTTY !== true) return;
    const now = Date.now();
    if (now - this.started < this.delay || now - this.drawnAt < REDRAW_MS) return;
    this.drawnAt = now;
    this.shown = true;
    const f = total > 0 ? Math.min(1, done / total) : 0;
    const fill = Math.round(f * WIDTH);
    const mb = (n: number): string => (n / 1048576).toFixed(1);
    this.stream.write(
      `\r${this.label} [${'='.repeat(fill)}${' '.repeat(WIDTH - fill)}] ${(f * 100).toFixed(0).padStart(3)}% ${mb(done)}/${mb(total)} MiB`,
    );
  }

  done(): void {
    if (this.shown) this.stream.write('\r\x1b[K');
  }
}
