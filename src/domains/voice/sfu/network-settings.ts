import type { Config } from '../../../config/config.ts';
import type { SfuNetworkSettings } from './media-config.ts';

/** The SFU's network settings from configuration; test mode adds loopback candidates (everything is local). */
export function sfuNetwork(
  config: Pick<
    Config,
    | 'voiceAnnouncedAddresses'
    | 'voicePortRange'
    | 'voiceTurnUrls'
    | 'voiceTurnUsername'
    | 'voiceTurnCredential'
    | 'testMode'
  >,
): SfuNetworkSettings {
  const iceServers =
    config.voiceTurnUrls.length === 0
      ? []
      : [
          {
            urls: config.voiceTurnUrls,
            ...(config.voiceTurnUsername ? { username: config.voiceTurnUsername } : {}),
            ...(config.voiceTurnCredential ? { credential: config.voiceTurnCredential } : {}),
          },
        ];
  return {
    announcedAddresses: config.voiceAnnouncedAddresses,
    portRange: config.voicePortRange,
    iceServers,
    includeLoopback: config.testMode,
  };
}
