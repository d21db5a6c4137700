import type {
  Channel,
  CommandIndex,
  Guild,
  GuildNotificationSettings,
  GuildSettingsChanges,
  Invite,
  Member,
  Message,
  Relationship,
  Role,
  SearchAnswer,
  SearchParams,
  SendMessageBody,
  UserProfile,
} from './chat-types.ts';
import type { HttpClient } from './http.ts';
import type { Snowflake } from './types.ts';

const enc = encodeURIComponent;

/** The chat routes the web client calls (docs/chat.md, docs/media.md for attachments). */
export class ChatApi {
  constructor(private readonly http: HttpClient) {}

  /** `PATCH /users/@me/settings` (docs/accounts.md for the members). */
  updateSettings(changes: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.http.request('PATCH', '/users/@me/settings', { body: changes });
  }
  /** `PATCH /users/@me/guilds/{id}/settings` (docs/chat.md#notification-settings): the whole object back. */
  /** `guildId` '@me': the direct conversations' entry. */
  updateGuildSettings(guildId: Snowflake, changes: GuildSettingsChanges): Promise<GuildNotificationSettings> {
    return this.http.request('PATCH', `/users/@me/guilds/${enc(guildId)}/settings`, { body: changes });
  }
  createGuild(name: string): Promise<Guild> {
    return this.http.request('POST', '/guilds', { body: { name } });
  }
  leaveGuild(guildId: Snowflake): Promise<void> {
    return this.http.request('DELETE', `/users/@me/guilds/${guildId}`);
  }
  createChannel(guildId: Snowflake, body: { name: string; type: number; parent_id?: Snowflake }): Promise<Channel> {
    return this.http.request('POST', `/guilds/${guildId}/channels`, { body });
  }
  roles(guildId: Snowflake): Promise<Role[]> {
    return this.http.request('GET', `/guilds/${guildId}/roles`);
  }
  members(guildId: Snowflake, after?: Snowflake): Promise<Member[]> {
    return this.http.request('GET', `/guilds/${guildId}/members`, { query: { limit: '1000', after } });
  }
  messages(channelId: Snowflake, query: { before?: Snowflake; after?: Snowflake; around?: Snowflake; limit?: number }) {
    return this.http.request<Message[]>('GET', `/channels/${channelId}/messages`, {
      query: {
        before: query.before,
        after: query.after,
        around: query.around,
        limit: String(query.limit ?? 50),
      },
    });
  }
  /**
   * Message search (docs/chat.md, "Search"): a guild's channels, or one channel (a DM) when `channelId` is
   * given instead; Discord's answer, each hit a one-element array.
   */
  search(scope: { guildId?: Snowflake; channelId?: Snowflake }, query: SearchParams): Promise<SearchAnswer> {
    const path = scope.guildId
      ? `/guilds/${scope.guildId}/messages/search`
      : `/channels/${scope.channelId}/messages/search`;
    return this.http.request('GET', path, { query: { ...query } });
  }
  send(channelId: Snowflake, body: SendMessageBody): Promise<Message> {
    return this.http.request('POST', `/channels/${channelId}/messages`, { body });
  }
  /** Multipart send (payload_json + files[n]) with upload progress. */
  sendWithFiles(
    channelId: Snowflake,
    body: SendMessageBody,
    files: File[],
    onProgress: (sent: number, total: number) => void,
  ): Promise<Message> {
    const form = new FormData();
    const attachments = files.map((file, index) => ({ id: index, filename: file.name }));
    form.append('payload_json', JSON.stringify({ ...body, attachments }));
    files.forEach((file, index) => {
      form.append(`files[${index}]`, file, file.name);
    });
    return this.http.upload('POST', `/channels/${channelId}/messages`, form, onProgress);
  }
  edit(channelId: Snowflake, messageId: Snowflake, content: string): Promise<Message> {
    return this.http.request('PATCH', `/channels/${channelId}/messages/${messageId}`, { body: { content } });
  }
  /** Keeps only these attachments (by id): removing one is an edit listing the others (docs/media.md). */
  keepAttachments(channelId: Snowflake, messageId: Snowflake, ids: Snowflake[]): Promise<Message> {
    return this.http.request('PATCH', `/channels/${channelId}/messages/${messageId}`, {
      body: { attachments: ids.map((id) => ({ id })) },
    });
  }
  remove(channelId: Snowflake, messageId: Snowflake): Promise<void> {
    return this.http.request('DELETE', `/channels/${channelId}/messages/${messageId}`);
  }
  pin(channelId: Snowflake, messageId: Snowflake, pinned: boolean): Promise<void> {
    return this.http.request(pinned ? 'PUT' : 'DELETE', `/channels/${channelId}/pins/${messageId}`);
  }
  /** Reports a message to the instance's admins (docs/safety.md). */
  reportMessage(channelId: Snowflake, messageId: Snowflake, category: string, description: string): Promise<unknown> {
    return this.http.request('POST', '/reports/message', {
      body: { channel_id: channelId, message_id: messageId, category, description: description.trim() || null },
    });
  }
  pins(channelId: Snowflake): Promise<Message[]> {
    return this.http.request('GET', `/channels/${channelId}/pins`);
  }
  react(channelId: Snowflake, messageId: Snowflake, emoji: string, on: boolean): Promise<void> {
    return this.http.request(
      on ? 'PUT' : 'DELETE',
      `/channels/${channelId}/messages/${messageId}/reactions/${enc(emoji)}/@me`,
    );
  }
  /** Rings the DM's other recipients (docs/voice.md, DM calls). */
  ringCall(channelId: Snowflake): Promise<void> {
    return this.http.request('POST', `/channels/${channelId}/call/ring`, { body: {} });
  }
  /** Stops ringing oneself: declining a call. */
  declineCall(channelId: Snowflake): Promise<void> {
    return this.http.request('POST', `/channels/${channelId}/call/stop-ringing`, { body: {} });
  }
  typing(channelId: Snowflake): Promise<void> {
    return this.http.request('POST', `/channels/${channelId}/typing`);
  }
  /** `keepalive`: sent as the tab closes or reloads (the request outlives the page). */
  ack(channelId: Snowflake, messageId: Snowflake, keepalive = false): Promise<unknown> {
    return this.http.request('POST', `/channels/${channelId}/messages/${messageId}/ack`, { body: {}, keepalive });
  }
  createInvite(channelId: Snowflake): Promise<Invite> {
    return this.http.request('POST', `/channels/${channelId}/invites`, { body: { max_age: 604800 } });
  }
  invite(code: string): Promise<Invite> {
    return this.http.request('GET', `/invites/${enc(code)}`, { auth: false });
  }
  acceptInvite(code: string): Promise<Invite> {
    return this.http.request('POST', `/invites/${enc(code)}`, { body: {} });
  }
  /** The commands this person may use in a channel (docs/bots.md), for the composer's slash-command picker. */
  /** The guild's applications (its bots) and every command they offer there, whatever the channel. */
  guildCommandIndex(guildId: Snowflake): Promise<CommandIndex> {
    return this.http.request('GET', `/guilds/${guildId}/application-command-index`);
  }
  commandIndex(channelId: Snowflake): Promise<CommandIndex> {
    return this.http.request('GET', `/channels/${channelId}/application-command-index`);
  }
  /**
   * A person's interaction with a bot (docs/bots.md): slash commands, component clicks and selections, modal
   * submissions.
   */
  interact(body: Record<string, unknown>): Promise<void> {
    return this.http.request('POST', '/interactions', { body });
  }
  /**
   * A slash command with attachment options: multipart, its files as `files[n]`, each named by an entry of
   * `data.attachments` whose id an attachment option's value repeats (docs/bots.md#attachment-options).
   */
  interactWithFiles(
    body: Record<string, unknown> & { data: Record<string, unknown> },
    files: File[],
    onProgress: (sent: number, total: number) => void,
  ): Promise<void> {
    const form = new FormData();
    const attachments = files.map((file, index) => ({ id: String(index), filename: file.name }));
    form.append('payload_json', JSON.stringify({ ...body, data: { ...body.data, attachments } }));
    files.forEach((file, index) => {
      form.append(`files[${index}]`, file, file.name);
    });
    return this.http.upload('POST', '/interactions', form, onProgress);
  }
  /** The user, and the guilds and friends the caller shares with them. */
  profile(userId: Snowflake): Promise<UserProfile> {
    return this.http.request('GET', `/users/${userId}/profile`);
  }
  setNote(userId: Snowflake, note: string): Promise<void> {
    return this.http.request('PUT', `/users/@me/notes/${userId}`, { body: { note } });
  }
  openDm(recipientId: Snowflake): Promise<Channel> {
    return this.http.request('POST', '/users/@me/channels', { body: { recipient_id: recipientId } });
  }
  openGroupDm(recipients: Snowflake[]): Promise<Channel> {
    return this.http.request('POST', '/users/@me/channels', { body: { recipients } });
  }
  /** Renames a group DM or sets (data URI) or clears (null) its icon; an absent field is left as it is. */
  editGroupDm(channelId: Snowflake, body: { name?: string; icon?: string | null }): Promise<Channel> {
    return this.http.request('PATCH', `/channels/${channelId}`, { body });
  }
  relationships(): Promise<Relationship[]> {
    return this.http.request('GET', '/users/@me/relationships');
  }
  addFriend(username: string): Promise<void> {
    return this.http.request('POST', '/users/@me/relationships', { body: { username } });
  }
  setRelationship(userId: Snowflake, type: 1 | 2): Promise<void> {
    return this.http.request('PUT', `/users/@me/relationships/${userId}`, { body: { type } });
  }
  removeRelationship(userId: Snowflake): Promise<void> {
    return this.http.request('DELETE', `/users/@me/relationships/${userId}`);
  }
}
