import { type PartialUser, partialUser, publicFlags, type UserRecord } from '../../identity/user-record.ts';
import type { ApplicationRecord } from './applications-repository.ts';

/** The bot user inside the owner's application object (`botView`). */
export type BotView = {
  id: string;
  username: string;
  discriminator: '0001';
  avatar: string | null;
  banner: string | null;
  bio: string | null;
  /** Only in the create and reset responses. */
  token?: string;
  mfa_enabled: false;
  authenticator_types: [];
  flags: number;
};

/** The owner's view of an application (`applicationView`, docs/oauth2.md#applications). */
export type ApplicationView = {
  id: string;
  name: string;
  description: string | null;
  redirect_uris: string[];
  bot_public: boolean;
  bot_require_code_grant: boolean;
  public_client: boolean;
  verify_key: string;
  interactions_endpoint_url: string | null;
  /** Only right after it is minted. */
  client_secret?: string;
  bot?: BotView;
};

/** `GET /applications/@me` to a bot (`currentBotApplicationView`). */
export type CurrentBotApplicationView = {
  id: string;
  name: string;
  icon: string | null;
  description: string | null;
  bot_public: boolean;
  bot_require_code_grant: boolean;
  verify_key: string;
  interactions_endpoint_url: string | null;
  flags: 0;
  owner: PartialUser | null;
  bot?: PartialUser;
  redirect_uris: string[];
};

/** The application as an OAuth2 client sees it (`applicationSummary`). */
export type ApplicationSummaryView = {
  id: string;
  name: string;
  icon: string | null;
  description: string | null;
  bot_public: boolean;
  bot_require_code_grant: boolean;
  flags: number;
};

/** The bot user inside an application object (docs/oauth2.md#applications); `token` only in create and reset responses. */
export function botView(bot: UserRecord, token?: string): BotView {
  return {
    id: bot.id,
    username: bot.username,
    discriminator: '0001',
    avatar: bot.avatar,
    banner: bot.banner,
    bio: bot.bio,
    ...(token !== undefined ? { token } : {}),
    mfa_enabled: false,
    authenticator_types: [],
    flags: publicFlags(bot),
  };
}

/**
 * The owner's view of an application; `clientSecret` and `botToken` only right after they are minted.
 * `verifyKey` is the application's (made when missing: `InteractionKeys.verifyKey`).
 */
export function applicationView(
  app: ApplicationRecord,
  bot: UserRecord | undefined,
  verifyKey: string,
  secrets: { clientSecret?: string; botToken?: string } = {},
): ApplicationView {
  return {
    id: app.id,
    name: app.name,
    description: app.description,
    redirect_uris: app.redirectUris,
    bot_public: app.botPublic,
    bot_require_code_grant: app.botRequireCodeGrant,
    public_client: app.publicClient,
    verify_key: verifyKey,
    interactions_endpoint_url: app.interactionsEndpointUrl,
    ...(secrets.clientSecret !== undefined ? { client_secret: secrets.clientSecret } : {}),
    ...(bot ? { bot: botView(bot, secrets.botToken) } : {}),
  };
}

/** What `GET /applications/@me` returns to a bot (the shape discord.js reads). */
export function currentBotApplicationView(
  app: ApplicationRecord,
  owner: UserRecord | undefined,
  bot: UserRecord | undefined,
  verifyKey: string,
): CurrentBotApplicationView {
  return {
    id: app.id,
    name: app.name,
    icon: app.icon,
    description: app.description,
    bot_public: app.botPublic,
    bot_require_code_grant: app.botRequireCodeGrant,
    verify_key: verifyKey,
    interactions_endpoint_url: app.interactionsEndpointUrl,
    flags: 0,
    owner: owner ? partialUser(owner) : null,
    ...(bot ? { bot: partialUser(bot) } : {}),
    redirect_uris: app.redirectUris,
  };
}

/** The application as an OAuth2 client sees it (`/oauth2/@me`, authorised-apps list). */
export function applicationSummary(app: ApplicationRecord): ApplicationSummaryView {
  return {
    id: app.id,
    name: app.name,
    icon: app.icon,
    description: app.description,
    bot_public: app.botPublic,
    bot_require_code_grant: app.botRequireCodeGrant,
    flags: app.flags,
  };
}
