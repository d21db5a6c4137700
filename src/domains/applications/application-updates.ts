import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { nullableText } from '../../http/fields.ts';
import type { ApplicationRecord } from './applications-repository.ts';
import { MAX_ENDPOINT_URL_LENGTH } from './interactions-endpoint.ts';
import { redirectUrisField } from './redirect-uris.ts';

// Application edits, shared by the owner's routes (routes.ts) and the bot's own `PATCH /applications/@me`
// (bot-routes.ts).

/** An application's name, at creation and on edit. */
export const nameField = z.string().trim().min(1).max(100);

/** Discord's application fields an owner edits; `interactions_endpoint_url` is verified before it is kept. */
export const patchBody = z.object({
  name: nameField.optional(),
  description: nullableText(400),
  redirect_uris: redirectUrisField.nullish(),
  bot_public: z.boolean().optional(),
  bot_require_code_grant: z.boolean().optional(),
  public_client: z.boolean().optional(),
  interactions_endpoint_url: nullableText(4 * MAX_ENDPOINT_URL_LENGTH),
});
export type ApplicationPatch = z.infer<typeof patchBody>;

/**
 * Applies an owner's (or the bot's own) edit. A new `interactions_endpoint_url` is checked and verified first
 * (a signed PING, and a wrongly signed one that must be refused), so a URL that fails is never stored;
 * `null` or `""` clears it and interactions go back to the gateway.
 */
export async function applyApplicationPatch(
  services: Pick<AppServices, 'applications' | 'ids' | 'interactionsEndpoint'>,
  app: ApplicationRecord,
  body: ApplicationPatch,
): Promise<void> {
  let endpoint: string | null | undefined = body.interactions_endpoint_url;
  if (endpoint !== undefined && endpoint !== null && endpoint !== app.interactionsEndpointUrl) {
    const url = services.interactionsEndpoint.check(endpoint);
    await services.interactionsEndpoint.verify(app.id, url, services.ids.next());
    endpoint = url.href;
  }
  await services.applications.update(app.id, {
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.description !== undefined ? { description: body.description } : {}),
    // `null` clears the list (docs/conventions.md#requests).
    ...(body.redirect_uris !== undefined ? { redirectUris: body.redirect_uris ?? [] } : {}),
    ...(body.bot_public !== undefined ? { botPublic: body.bot_public } : {}),
    ...(body.bot_require_code_grant !== undefined ? { botRequireCodeGrant: body.bot_require_code_grant } : {}),
    ...(body.public_client !== undefined ? { publicClient: body.public_client } : {}),
    ...(endpoint !== undefined ? { interactionsEndpointUrl: endpoint } : {}),
  });
}

/**
 * The application with its `verify_key`. When the key pair had to be made or replaced just now (which may
 * clear the endpoint URL), the application is read again so the view shows what is stored.
 */
export async function withVerifyKey(
  services: Pick<AppServices, 'applications' | 'interactionKeys'>,
  app: ApplicationRecord,
): Promise<{ app: ApplicationRecord; verifyKey: string }> {
  const verifyKey = await services.interactionKeys.verifyKey(app.id);
  if (verifyKey === app.verifyKey) return { app, verifyKey };
  return { app: (await services.applications.findById(app.id)) ?? app, verifyKey };
}
