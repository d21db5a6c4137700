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

interface VideoStats {
  type: string;
  kind?: string;
  trackIdentifier?: string;
  framesDecoded?: number;
  bytesSent?: number;
  codecId?: string;
  scalabilityMode?: string;
  mimeType?: string;
}

/**
 * The inbound stream shown in the video element labelled `label` (a tile, e.g. "Video of alice"): its frames
 * decoded and its codec's MIME type (`video/VP8`, `video/H264`), matched through the element's track id.
 */
export function decodedVideo(page: Page, label: string): Promise<{ framesDecoded: number; mimeType: string | null }> {
  return page.evaluate(async (label) => {
    const video = [...document.querySelectorAll('video')].find((v) => v.getAttribute('aria-label') === label);
    const track = (video?.srcObject as MediaStream | null)?.getVideoTracks()[0];
    const report = (await (
      window as unknown as { hearthVoiceStats?: () => Promise<RTCStatsReport> }
    ).hearthVoiceStats?.()) as Map<string, VideoStats> | undefined;
    let found = { framesDecoded: 0, mimeType: null as string | null };
    report?.forEach((s) => {
      if (s.type !== 'inbound-rtp' || !track || s.trackIdentifier !== track.id) return;
      found = { framesDecoded: s.framesDecoded ?? 0, mimeType: (s.codecId && report.get(s.codecId)?.mimeType) || null };
    });
    return found;
  }, label);
}

/** The codecs (MIME types) of the page's outbound video that has sent bytes. */
export function sentVideoCodecs(page: Page): Promise<string[]> {
  return page.evaluate(async () => {
    const report = (await (
      window as unknown as { hearthVoiceStats?: () => Promise<RTCStatsReport> }
    ).hearthVoiceStats?.()) as Map<string, VideoStats> | undefined;
    const codecs: string[] = [];
    report?.forEach((s) => {
      if (s.type === 'outbound-rtp' && s.kind === 'video' && (s.bytesSent ?? 0) > 0 && s.codecId) {
        const mimeType = report.get(s.codecId)?.mimeType;
        if (mimeType) codecs.push(mimeType);
      }
    });
    return codecs;
  });
}

/**
 * Waits (up to 20 s) until the stream in the tile labelled `label` has decoded `frames` frames, then returns its
 * codec; throws with what was decoded.
 */
export async function decodesVideo(page: Page, label: string, frames = 20): Promise<string | null> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const stats = await decodedVideo(page, label);
    if (stats.framesDecoded >= frames) return stats.mimeType;
    if (Date.now() > deadline)
      throw new Error(`${label}: ${stats.framesDecoded} frames decoded (${stats.mimeType ?? 'no codec'})`);
    await page.waitForTimeout(250);
  }
}

/** The scalability modes (`L1T3` …) of the page's outbound video that has sent bytes. */
export function sentScalabilityModes(page: Page): Promise<string[]> {
  return page.evaluate(async () => {
    const report = (await (
      window as unknown as { hearthVoiceStats?: () => Promise<RTCStatsReport> }
    ).hearthVoiceStats?.()) as Map<string, VideoStats> | undefined;
    const modes: string[] = [];
    report?.forEach((s) => {
      if (s.type === 'outbound-rtp' && s.kind === 'video' && (s.bytesSent ?? 0) > 0)
        modes.push(s.scalabilityMode ?? '');
    });
    return modes;
  });
}
