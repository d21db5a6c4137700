import { z } from 'zod';
import { isSnowflake } from '../../platform/crypto/snowflake.ts';

export const allowedMentionsSchema = z.object({
  parse: z
    .array(z.enum(['users', 'roles', 'everyone']))
    .max(3)
    .optional(),
  users: z
    .array(z.union([z.string(), z.number()]).transform(String))
    .max(100)
    .optional(),
  roles: z
    .array(z.union([z.string(), z.number()]).transform(String))
    .max(100)
    .optional(),
  replied_user: z.boolean().optional(),
});

export type AllowedMentions = z.infer<typeof allowedMentionsSchema>;

export interface ParsedMentions {
  users: string[];
  roles: string[];
  everyone: boolean;
}

const USER_MENTION = /<@!?(\d{1,20})>/g;
const ROLE_MENTION = /<@&(\d{1,20})>/g;
const EVERYONE = /@(everyone|here)\b/;

/** What the content mentions, before allowed_mentions and permissions narrow it. */
export function parseMentions(content: string): ParsedMentions {
  const users = new Set<string>();
  const roles = new Set<string>();
  // A mention of an id past 2^63−1 names nobody: it stays text.
  for (const match of content.matchAll(USER_MENTION))
    if (isSnowflake(match[1] as string)) users.add(BigInt(match[1] as string).toString());
  for (const match of content.matchAll(ROLE_MENTION))
    if (isSnowflake(match[1] as string)) roles.add(BigInt(match[1] as string).toString());
  return { users: [...users], roles: [...roles], everyone: EVERYONE.test(content) };
}

/**
 * Applies `allowed_mentions` (absent = parse everything, as Discord does): explicit id lists allow exactly
 * those ids; `parse` allows a whole kind. `@everyone` also needs MENTION_EVERYONE; without it the text stays
 * but nobody is pinged.
 */
export function effectiveMentions(
  parsed: ParsedMentions,
  allowed: AllowedMentions | undefined,
  options: { canMentionEveryone: boolean; mentionableRoleIds: ReadonlySet<string> },
): ParsedMentions {
  const parse = new Set(allowed ? (allowed.parse ?? []) : ['users', 'roles', 'everyone']);
  const users = parsed.users.filter((id) => parse.has('users') || (allowed?.users ?? []).includes(id));
  const roles = parsed.roles.filter(
    (id) =>
      (parse.has('roles') || (allowed?.roles ?? []).includes(id)) &&
      (options.canMentionEveryone || options.mentionableRoleIds.has(id)),
  );
  const everyone = parsed.everyone && parse.has('everyone') && options.canMentionEveryone;
  return { users, roles, everyone };
}

/** Whether a reply pings the replied-to author: yes by default, no once allowed_mentions is given without it. */
export function pingsRepliedUser(allowed: AllowedMentions | undefined): boolean {
  if (!allowed) return true;
  return allowed.replied_user === true;
}
