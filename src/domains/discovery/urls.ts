import type { Config } from '../../config/config.ts';

/** Gateway URL: the public URL with its scheme switched to ws(s) and `/gateway` appended. */
export function gatewayUrl(config: Pick<Config, 'publicUrl'>): string {
  return `${config.publicUrl.replace(/^http/, 'ws')}/gateway`;
}
