import type { Logger } from '../../platform/log.ts';
import { PeriodicTask } from '../../platform/periodic-task.ts';
import type { ThreadService } from './thread-service.ts';

/**
 * Archives threads idle past their auto_archive_duration, on the shared clock (so the test clock's shift
 * archives them too). Each sweep is one bounded statement, safe from several processes at once.
 */
export class ThreadArchiver {
  private readonly task: PeriodicTask;

  constructor(threads: ThreadService, log: Logger, intervalMs: number) {
    this.task = new PeriodicTask({
      intervalMs,
      run: async () => {
        const archived = await threads.archiveIdle();
        if (archived > 0) log.info('threads auto-archived', { archived });
      },
      onError: (error) => log.error('thread auto-archive failed', { error: (error as Error).message }),
    });
  }

  start(): void {
    this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }
}
