export interface PeriodicTaskOptions {
  /** Pause between ticks; the first run comes one interval after `start()`. */
  intervalMs: number;
  /** One run; a tick while a run is still in flight is skipped, so runs never overlap. */
  run: () => Promise<void>;
  /** Receives whatever `run` rejects with; nothing is thrown from the timer. */
  onError: (error: unknown) => void;
  /** Asked at each tick before a run starts; `false` skips that tick. */
  shouldRun?: () => boolean;
}

/**
 * Runs a task every `intervalMs` on an unref'd timer (it never keeps the process alive). `stop()` clears
 * the timer and waits for the run in flight, if any.
 */
export class PeriodicTask {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly options: PeriodicTaskOptions) {}

  start(): void {
    if (this.timer) return;
    const { intervalMs, run, onError, shouldRun } = this.options;
    this.timer = setInterval(() => {
      if (this.running || (shouldRun && !shouldRun())) return;
      this.running = run()
        .catch(onError)
        .finally(() => {
          this.running = undefined;
        });
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
