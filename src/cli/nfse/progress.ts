/**
 * Progress of `nfse emit` on stderr. On a terminal: one bar redrawn in place. Otherwise (a file, a pipe, CI):
 * plain lines, one per accepted chunk and one per change of the final counts (at most every few seconds).
 */
export interface ProgressCounts {
  total: number;
  accepted: number;
  refused: number;
  issued: number;
  errors: number;
}

export class Progress {
  private lastLine = 0;
  private lastText = '';
  private readonly tty: boolean;

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly plainEveryMs = 5000,
  ) {
    this.tty = Boolean(stream.isTTY);
  }

  private bar(fraction: number, width: number): string {
    const filled = Math.round(Math.max(0, Math.min(1, fraction)) * width);
    return `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
  }

  private text(c: ProgressCounts): string {
    const final = c.issued + c.errors + c.refused;
    return `accepted ${c.accepted}/${c.total} · issued ${c.issued} · errors ${c.errors}${c.refused ? ` · refused ${c.refused}` : ''} · final ${final}/${c.total}`;
  }

  /** Redraws the bar (terminal) or prints a line when the counts changed and enough time passed (`force`: now). */
  update(c: ProgressCounts, force = false): void {
    const text = this.text(c);
    if (this.tty) {
      const width = Math.max(10, Math.min(40, (this.stream.columns ?? 80) - text.length - 4));
      const fraction = c.total === 0 ? 1 : (c.issued + c.errors + c.refused + c.accepted) / (2 * c.total);
      this.stream.write(`\r\x1b[2K${this.bar(fraction, width)} ${text}`);
      return;
    }
    if (text === this.lastText) return;
    if (!force && Date.now() - this.lastLine < this.plainEveryMs) return;
    this.lastLine = Date.now();
    this.lastText = text;
    this.stream.write(`${text}\n`);
  }

  /** A message of its own line (the bar is redrawn after it on a terminal). */
  log(message: string): void {
    if (this.tty) this.stream.write(`\r\x1b[2K${message}\n`);
    else this.stream.write(`${message}\n`);
  }

  end(): void {
    if (this.tty) this.stream.write('\n');
  }
}
