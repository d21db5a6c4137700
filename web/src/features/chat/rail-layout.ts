import type { GuildFolder, RailItem } from './store.ts';

/** What is moved on the rail: a guild (from anywhere) or a whole folder. */
export type RailThing = { guildId: string } | { folderId: number | string };

/** Where it goes: before, after or into (a new folder, or an existing one) a guild or a folder. */
export interface RailTarget {
  kind: 'guild' | 'folder';
  id: string | number;
  where: 'before' | 'after' | 'into';
}

/** The rail as settings `guild_folders`, every joined guild once, in the rail's order. */
export function railFolders(items: RailItem[]): GuildFolder[] {
  return items.map((item) =>
    item.kind === 'guild'
      ? { id: null, name: null, color: null, guild_ids: [item.guild.guild.id] }
      : { id: item.id, name: item.name, color: item.color, guild_ids: item.guilds.map((g) => g.guild.id) },
  );
}

const copy = (folders: GuildFolder[]) => folders.map((folder) => ({ ...folder, guild_ids: [...folder.guild_ids] }));
const single = (guildId: string): GuildFolder => ({ id: null, name: null, color: null, guild_ids: [guildId] });

/** Drops empty entries, and a folder left with one guild becomes that guild alone. */
function tidy(folders: GuildFolder[]): GuildFolder[] {
  return folders
    .filter((folder) => folder.guild_ids.length > 0)
    .map((folder) =>
      folder.id !== null && folder.guild_ids.length === 1 ? single(folder.guild_ids[0] as string) : folder,
    );
}

/** A new folder's id: a random integer, as Discord's clients make them. */
function newFolderId(): number {
  return Math.floor(Math.random() * 2 ** 31);
}

/** `folders` with `thing` dropped on `target`, or null when nothing changes. */
export function dropOnRail(folders: GuildFolder[], thing: RailThing, target: RailTarget): GuildFolder[] | null {
  const next = copy(folders);
  let moving: GuildFolder;
  if ('guildId' in thing) {
    if (target.kind === 'guild' && target.id === thing.guildId) return null;
    const from = next.find((folder) => folder.guild_ids.includes(thing.guildId));
    if (!from) return null;
    from.guild_ids = from.guild_ids.filter((id) => id !== thing.guildId);
    moving = single(thing.guildId);
  } else {
    const index = next.findIndex((folder) => folder.id !== null && folder.id === thing.folderId);
    if (index < 0) return null;
    moving = next.splice(index, 1)[0] as GuildFolder;
    // A folder dropped on a guild of a folder, or on itself: nothing (folders do not nest).
    if (target.kind === 'folder' && target.id === thing.folderId) return null;
  }
  const at =
    target.kind === 'folder'
      ? next.findIndex((folder) => folder.id !== null && folder.id === target.id)
      : next.findIndex((folder) => folder.guild_ids.includes(target.id as string));
  const entry = next[at];
  if (!entry) return null;
  if (moving.id === null) {
    const guildId = moving.guild_ids[0] as string;
    if (target.where === 'into') {
      if (entry.id !== null) entry.guild_ids.push(guildId);
      else next[at] = { id: newFolderId(), name: null, color: null, guild_ids: [...entry.guild_ids, guildId] };
    } else if (target.kind === 'guild' && entry.id !== null) {
      const index = entry.guild_ids.indexOf(target.id as string);
      entry.guild_ids.splice(target.where === 'before' ? index : index + 1, 0, guildId);
    } else {
      next.splice(target.where === 'before' ? at : at + 1, 0, moving);
    }
  } else {
    if (target.kind === 'guild' && entry.id !== null && target.where === 'into') return null;
    next.splice(target.where === 'after' ? at + 1 : at, 0, moving);
  }
  return tidy(next);
}

/**
 * `folders` with `thing` one step up (-1) or down (1), or null at the end: a guild in a folder moves within it,
 * and out of it past its first or last guild; anything else swaps with its neighbour (a folder as a whole).
 */
export function stepOnRail(folders: GuildFolder[], thing: RailThing, step: -1 | 1): GuildFolder[] | null {
  const next = copy(folders);
  const at =
    'guildId' in thing
      ? next.findIndex((folder) => folder.guild_ids.includes(thing.guildId))
      : next.findIndex((folder) => folder.id !== null && folder.id === thing.folderId);
  const entry = next[at];
  if (!entry) return null;
  if ('guildId' in thing && entry.id !== null) {
    const index = entry.guild_ids.indexOf(thing.guildId);
    const to = index + step;
    if (to >= 0 && to < entry.guild_ids.length) {
      entry.guild_ids.splice(index, 1);
      entry.guild_ids.splice(to, 0, thing.guildId);
    } else {
      entry.guild_ids.splice(index, 1);
      next.splice(step < 0 ? at : at + 1, 0, single(thing.guildId));
    }
    return tidy(next);
  }
  const to = at + step;
  if (to < 0 || to >= next.length) return null;
  next.splice(at, 1);
  next.splice(to, 0, entry);
  return tidy(next);
}

/** Where a guild or folder stands after a move: its place among the rail's items, or within its folder. */
export function placeOnRail(
  folders: GuildFolder[],
  thing: RailThing,
): { position: number; count: number; folder: GuildFolder | null } | null {
  const at =
    'guildId' in thing
      ? folders.findIndex((folder) => folder.guild_ids.includes(thing.guildId))
      : folders.findIndex((folder) => folder.id !== null && folder.id === thing.folderId);
  const entry = folders[at];
  if (!entry) return null;
  if ('guildId' in thing && entry.id !== null) {
    return { position: entry.guild_ids.indexOf(thing.guildId) + 1, count: entry.guild_ids.length, folder: entry };
  }
  return { position: at + 1, count: folders.length, folder: null };
}

/**
 * `folders` with a guild outside any folder joined to the item under it (Alt+Shift+ArrowRight): into that
 * folder, or a new folder of the two guilds; null when there is none or the guild is in a folder already.
 */
export function joinOnRail(folders: GuildFolder[], guildId: string): GuildFolder[] | null {
  const at = folders.findIndex((folder) => folder.guild_ids.includes(guildId));
  const entry = folders[at];
  const below = folders[at + 1];
  if (!entry || entry.id !== null || !below) return null;
  return below.id !== null
    ? dropOnRail(folders, { guildId }, { kind: 'folder', id: below.id, where: 'into' })
    : dropOnRail(folders, { guildId }, { kind: 'guild', id: below.guild_ids[0] as string, where: 'into' });
}

/** `folders` with a folder's guilds taken out of it, each alone where the folder was ("Ungroup"); null if none. */
export function ungroupOnRail(folders: GuildFolder[], folderId: number | string): GuildFolder[] | null {
  const at = folders.findIndex((folder) => folder.id !== null && folder.id === folderId);
  const entry = folders[at];
  if (!entry) return null;
  const next = copy(folders);
  next.splice(at, 1, ...entry.guild_ids.map(single));
  return next;
}
