import type { AppServices } from '../../app-services.ts';
import { randomBase64Url } from '../../platform/crypto/tokens.ts';
import { CREDENTIALS_REVOKED_TOPIC } from '../auth/sessions.ts';

/** 32 random bytes as base64url: 43 characters (docs/conventions.md#credentials). */
const SECRET_BYTES = 32;

export function newClientSecret(): string {
  return randomBase64Url(SECRET_BYTES);
}

/**
 * A bot token stopped working (reset or application deleted): drop every cached binding of the bot user and
 * tell the gateway to close the bot's sockets.
 */
export async function announceBotRevoked(
  services: Pick<AppServices, 'credentials' | 'bus'>,
  botUserId: string,
  applicationId: string,
): Promise<void> {
  await services.credentials.invalidate({ userId: botUserId });
  await services.bus.publish(CREDENTIALS_REVOKED_TOPIC, {
    kind: 'bot',
    userId: botUserId,
    applicationId,
  });
}
