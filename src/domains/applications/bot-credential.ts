import type {
  CredentialBinding,
  CredentialKind,
  FoundCredential,
  PresentedCredential,
} from '../../http/auth/credential-kind.ts';
import type { Principal } from '../../identity/principal.ts';
import type { UserRecord } from '../../identity/user-record.ts';
import type { TokenCheck } from '../../platform/crypto/token-check.ts';
import { constantTimeEqual } from '../../platform/crypto/tokens.ts';
import type { LegacyTokenDigests } from '../auth/legacy-token-digests.ts';
import type { ApplicationsRepository } from './applications-repository.ts';

type BotCredential = Extract<PresentedCredential, { kind: 'bot' }>;

class BotBinding implements CredentialBinding {
  readonly expiresAt = null;

  constructor(
    readonly userId: string,
    private readonly applicationId: string,
  ) {}

  principal(user: UserRecord): Principal {
    return { kind: 'bot', user, applicationId: this.applicationId };
  }

  /** A bot token's use is not recorded. */
  touch(): void {}
}

/** `Bot <application id>.<secret>`: the application's single bot token, stored as a digest on its row. */
export class BotCredentials implements CredentialKind<BotCredential> {
  constructor(
    private readonly applications: Pick<ApplicationsRepository, 'botToken'>,
    private readonly tokenCheck: TokenCheck,
    private readonly legacy: LegacyTokenDigests,
  ) {}

  plausible(credential: BotCredential, tokenHash: string): boolean {
    return this.tokenCheck.botChecks(credential.token, credential.applicationId) || this.legacy.has(tokenHash);
  }

  async lookup(credential: BotCredential, tokenHash: string): Promise<FoundCredential | undefined> {
    const bot = await this.applications.botToken(credential.applicationId);
    if (!bot || !constantTimeEqual(bot.botTokenHash, tokenHash)) return undefined;
    return { binding: new BotBinding(bot.botUserId, credential.applicationId) };
  }
}
