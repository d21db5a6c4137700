import type { Page } from 'playwright-core';

/**
 * What a page's call receives, read from its `RTCPeerConnection.getStats()` through the `hearthVoiceStats`
 * hook the web client exposes (docs/web.md#voice): the figures the voice browser tests assert on.
 */

interface StatsHooks {
  hearthVoiceStats?: () => Promise<{
    forEach(visit: (s: { type: string; kind?: string; bytesReceived?: number; framesDecoded?: number }) => void): void;
  }>;
}

/** Inbound audio bytes of the page's call, summed over its inbound-rtp audio streams. */
export function inboundAudioBytes(page: Page): Promise<number> {
  return page.evaluate(async () => {
    const report = await (window as unknown as StatsHooks).hearthVoiceStats?.();
    let bytes = 0;
    report?.forEach((s) => {
      if (s.type === 'inbound-rtp' && s.kind === 'audio') bytes += s.bytesReceived ?? 0;
    });
    return bytes;
  });
}

/** Frames decoded from inbound video (camera or screen) of the page's call. */
export function framesDecoded(page: Page): Promise<number> {
  return page.evaluate(async () => {
    const report = await (window as unknown as StatsHooks).hearthVoiceStats?.();
    let frames = 0;
    report?.forEach((s) => {
      if (s.type === 'inbound-rtp' && s.kind === 'video') frames += s.framesDecoded ?? 0;
    });
    return frames;
  });
}

/** Waits (up to 15 s) until the page receives audio and its inbound bytes grow by 2 KB; throws naming `what`. */
export async function audioGrowing(page: Page, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  let first = -1;
  for (;;) {
    const bytes = await inboundAudioBytes(page);
    if (first < 0 && bytes > 0) first = bytes;
    if (first > 0 && bytes > first + 2000) return;
    if (Date.now() > deadline) throw new Error(`${what}: inbound audio bytes did not grow (${first} → ${bytes})`);
    await page.waitForTimeout(250);
  }
}
