import { rmSync } from 'node:fs';
import { chromium, type Page } from 'playwright-core';
import { api, CHROMIUM, FLAGS, median, sessionScript, startHearth } from './web.ts';

/**
 * The chat view at scale (issue 18), Chromium on this machine against a server started like `npm start` in test
 * mode (its seeding routes, docs/accounts.md#test-harness-test-mode-only):
 *   - a channel with 10,000 messages: a click on its link to its newest message on screen     target ≤ 500 ms
 *   - scrolling back through all of it: long tasks over 50 ms (count, longest)                target none
 *   - JS heap after scrolling back (after a garbage collection)                               target ≤ 150 MB
 *   - switching to a guild with 500 channels and 5,000 members: a click on it to its composer  target ≤ 200 ms
 * `npm run bench:web-scale` prints them; `npm run bench -- --write` writes them into docs/performance.md.
 */

const MESSAGES = Number(process.env.BENCH_SCALE_MESSAGES ?? 10_000);
const CHANNELS = Number(process.env.BENCH_SCALE_CHANNELS ?? 500);
const MEMBERS = Number(process.env.BENCH_SCALE_MEMBERS ?? 5_000);
const SWITCHES = 5;
/** `BENCH_SCALE_CPU_THROTTLE=4`: the page runs as on a CPU four times slower (DevTools' throttling). */
const CPU_THROTTLE = Number(process.env.BENCH_SCALE_CPU_THROTTLE ?? 1);
/** Scrolling back stops here even when the start was not reached, so a regression cannot hang the run. */
const SCROLL_BUDGET_MS = 120_000;
const TEST_TOKEN = 'bench-web-scale-test-token';

export interface WebScaleResult {
  messages: number;
  channels: number;
  members: number;
  openMs: number;
  scrolledMessages: number;
  scrollMs: number;
  longTasks: number;
  longestTaskMs: number;
  heapMb: number;
  switchMs: number;
}

interface Fixture {
  b: { token: string; id: string };
  small: { guildId: string; channelId: string };
  big: { guildId: string; generalId: string; historyId: string };
}

async function harness(origin: string, path: string, body: unknown) {
  const res = await fetch(`${origin}/v1/test${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-test-token': TEST_TOKEN },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST /test${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

/** Runs `tasks` with at most `width` at a time. */
async function inBatches(count: number, width: number, task: (i: number) => Promise<unknown>): Promise<void> {
  for (let start = 0; start < count; start += width) {
    await Promise.all(Array.from({ length: Math.min(width, count - start) }, (_, k) => task(start + k)));
  }
}

async function fixture(origin: string): Promise<Fixture> {
  const register = async (name: string) => {
    const r = await api(origin, 'POST', '/auth/register', null, {
      email: `${name}${Date.now()}@bench.test`,
      password: 'bench-password-123',
      username: `${name}${Date.now() % 1e6}`,
    });
    return { token: r.token as string, id: r.user_id as string };
  };
  const a = await register('owner');
  const b = await register('reader');
  const join = async (guild: { system_channel_id: string }) => {
    const invite = await api(origin, 'POST', `/channels/${guild.system_channel_id}/invites`, a.token, {});
    await api(origin, 'POST', `/invites/${invite.code}`, b.token, {});
  };
  const small = await api(origin, 'POST', '/guilds', a.token, { name: 'Small' });
  await join(small);
  const big = await api(origin, 'POST', '/guilds', a.token, { name: 'Big' });
  await join(big);
  const history = await api(origin, 'POST', `/guilds/${big.id}/channels`, a.token, { name: 'history', type: 0 });
  await inBatches(CHANNELS - 2, 8, (i) =>
    api(origin, 'POST', `/guilds/${big.id}/channels`, a.token, { name: `channel-${i + 1}`, type: 0 }),
  );
  await harness(origin, `/guilds/${big.id}/members/seed`, { count: MEMBERS - 2 });
  const start = Date.now() - MESSAGES * 60_000;
  for (let first = 0; first < MESSAGES; first += 1000) {
    const messages = Array.from({ length: Math.min(1000, MESSAGES - first) }, (_, k) => {
      const n = first + k;
      return {
        timestamp: start + n * 60_000,
        content: `message **${n}** with _markdown_, a [link](https://example.com/${n}) and \`code ${n}\``,
      };
    });
    await harness(origin, '/messages/seed', { channel_id: history.id, author_id: a.id, messages });
  }
  return {
    b,
    small: { guildId: small.id, channelId: small.system_channel_id },
    big: { guildId: big.id, generalId: big.system_channel_id, historyId: history.id },
  };
}

/**
 * Milliseconds from the next click anywhere to the first frame in which `selector` matches an element whose
 * text is `text` (or any element when `text` is null): a capture-phase click listener and a MutationObserver,
 * read after the next animation frame so the paint is counted.
 */
async function armClickTimer(page: Page, selector: string, text: string | null): Promise<void> {
  await page.evaluate(
    `(() => {
      const selector = ${JSON.stringify(selector)};
      const text = ${JSON.stringify(text)};
      window.__clickToShown = new Promise((resolve) => {
        let clicked = 0;
        const found = () => [...document.querySelectorAll(selector)].some((el) => text === null || el.textContent === text);
        window.addEventListener('click', () => {
          clicked = performance.now();
          const observer = new MutationObserver(() => {
            if (!found()) return;
            observer.disconnect();
            requestAnimationFrame(() => resolve(performance.now() - clicked));
          });
          observer.observe(document.body, { childList: true, subtree: true, characterData: true });
        }, { capture: true, once: true });
      });
    })()`,
  );
}

const clickToShown = (page: Page) => page.evaluate('window.__clickToShown') as Promise<number>;

async function measure(origin: string, f: Fixture): Promise<Omit<WebScaleResult, 'messages' | 'channels' | 'members'>> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [...FLAGS, '--enable-precise-memory-info'],
    headless: true,
  });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript(sessionScript(f.b));
    const page = await context.newPage();
    if (CPU_THROTTLE > 1) {
      // A slower device than this one (DevTools' CPU throttling): what a long task is on a low-end laptop or phone.
      const throttle = await context.newCDPSession(page);
      await throttle.send('Emulation.setCPUThrottlingRate', { rate: CPU_THROTTLE });
    }
    await page.goto(`${origin}/channels/${f.small.guildId}/${f.small.channelId}`);
    await page.getByRole('textbox', { name: 'Message #general' }).waitFor({ timeout: 30_000 });
    const rail = page.getByRole('navigation', { name: 'Servers' });

    // Guild switches: Small → Big is timed (to Big's composer), Big → Small brings it back.
    const switches: number[] = [];
    for (let round = 0; round < SWITCHES; round++) {
      await armClickTimer(page, `[aria-label="Message #general"]`, null);
      await rail.getByRole('link', { name: /^Big/ }).click();
      switches.push(await clickToShown(page));
      await page.getByRole('link', { name: /^#history/ }).waitFor();
      await rail.getByRole('link', { name: /^Small/ }).click();
      await page.getByRole('link', { name: /^#history/ }).waitFor({ state: 'detached' });
    }

    // The 10,000-message channel, opened for the first time from Big's channel list.
    await rail.getByRole('link', { name: /^Big/ }).click();
    const newest = `message ${MESSAGES - 1} with markdown, a link and code ${MESSAGES - 1}`;
    await armClickTimer(page, '.message-list li .content', newest);
    await page.getByRole('link', { name: /^#history/ }).click();
    const openMs = await clickToShown(page);

    // Scrolling back to the start: long tasks observed all along, heap read at the end.
    await page.evaluate(`(() => {
      window.__longTasks = [];
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) window.__longTasks.push(entry.duration);
      }).observe({ type: 'longtask' });
    })()`);
    const scrollStarted = Date.now();
    // A plain DOM probe: a Playwright text locator walks every row's text in the page, and that work would be
    // counted among the page's long tasks.
    const reachedFirst = () =>
      page.evaluate(
        `[...document.querySelectorAll('.message-list li .content')].some((c) => c.textContent.startsWith('message 0 with'))`,
      ) as Promise<boolean>;
    while (Date.now() - scrollStarted < SCROLL_BUDGET_MS && !(await reachedFirst())) {
      await page.evaluate(`(() => {
        const el = document.querySelector('.messages');
        if (el) { el.scrollTop = 0; el.dispatchEvent(new Event('scroll')); }
      })()`);
      await page.waitForTimeout(50);
    }
    const scrollMs = Date.now() - scrollStarted;
    const scrolledMessages = await page.locator('.message-list li .content').count();
    const longTasks = (await page.evaluate('window.__longTasks')) as number[];
    // What the page keeps, not the garbage a collection would free: collect first (DevTools protocol).
    const cdp = await context.newCDPSession(page);
    await cdp.send('HeapProfiler.collectGarbage');
    const heap = (await page.evaluate('performance.memory.usedJSHeapSize')) as number;
    await context.close();
    return {
      openMs,
      scrolledMessages,
      scrollMs,
      longTasks: longTasks.filter((d) => d > 50).length,
      longestTaskMs: Math.max(0, ...longTasks),
      heapMb: heap / 1024 / 1024,
      switchMs: median(switches),
    };
  } finally {
    await browser.close();
  }
}

export async function runWebScaleBench(): Promise<WebScaleResult | undefined> {
  if (!CHROMIUM) {
    console.error("!!! no Chromium found (install Debian's chromium or set CHROMIUM_PATH): scale figures NOT measured");
    return undefined;
  }
  const { child, origin, dataDir } = await startHearth({ HEARTH_TEST_MODE: '1', HEARTH_TEST_TOKEN: TEST_TOKEN });
  try {
    const f = await fixture(origin);
    const measured = await measure(origin, f);
    return { messages: MESSAGES, channels: CHANNELS, members: MEMBERS, ...measured };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export function webScaleTable(r: WebScaleResult): string {
  const rows = [
    [
      `Open a channel of ${r.messages.toLocaleString('en')} messages: click → newest message painted`,
      `${r.openMs.toFixed(0)} ms`,
      '≤ 500 ms',
    ],
    [
      'Scroll back through it: long tasks over 50 ms (count, longest)',
      `${r.longTasks}, ${r.longestTaskMs.toFixed(0)} ms (${r.scrolledMessages.toLocaleString('en')} messages on screen after ${(r.scrollMs / 1000).toFixed(1)} s)`,
      'none',
    ],
    ['JS heap after scrolling back (after a collection)', `${r.heapMb.toFixed(0)} MB`, '≤ 150 MB'],
    [
      `Switch to a guild of ${r.channels} channels and ${r.members.toLocaleString('en')} members: click → composer (median of ${SWITCHES})`,
      `${r.switchMs.toFixed(0)} ms`,
      '≤ 200 ms',
    ],
  ];
  return ['| Measurement | Result | Target |', '|---|---|---|', ...rows.map((row) => `| ${row.join(' | ')} |`)].join(
    '\n',
  );
}

if (process.argv[1]?.endsWith('bench/web-scale.ts')) {
  const result = await runWebScaleBench();
  if (result) console.log(`\n${webScaleTable(result)}\n`);
}
