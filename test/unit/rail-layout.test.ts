import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  dropOnRail,
  joinOnRail,
  placeOnRail,
  stepOnRail,
  ungroupOnRail,
} from '../../web/src/features/chat/rail-layout.ts';
import type { GuildFolder } from '../../web/src/features/chat/store.ts';

/** The guild rail's moves (docs/web.md#the-guild-rail), as settings `guild_folders`. */
const single = (id: string): GuildFolder => ({ id: null, name: null, color: null, guild_ids: [id] });
const folder = (id: number, ...guilds: string[]): GuildFolder => ({ id, name: 'F', color: null, guild_ids: guilds });
const order = (folders: GuildFolder[] | null) =>
  folders?.map((f) => (f.id === null ? f.guild_ids[0] : `[${f.guild_ids.join(',')}]`));

describe('rail layout', () => {
  const rail = [single('a'), single('b'), folder(7, 'c', 'd'), single('e')];

  it('moves a guild before or after another, and refuses a drop on itself', () => {
    assert.deepEqual(order(dropOnRail(rail, { guildId: 'e' }, { kind: 'guild', id: 'a', where: 'before' })), [
      'e',
      'a',
      'b',
      '[c,d]',
    ]);
    assert.deepEqual(order(dropOnRail(rail, { guildId: 'a' }, { kind: 'guild', id: 'b', where: 'after' })), [
      'b',
      'a',
      '[c,d]',
      'e',
    ]);
    assert.equal(dropOnRail(rail, { guildId: 'a' }, { kind: 'guild', id: 'a', where: 'before' }), null);
  });

  it('makes a folder of two guilds, adds to a folder, and a folder left with one guild becomes that guild', () => {
    const made = dropOnRail(rail, { guildId: 'b' }, { kind: 'guild', id: 'a', where: 'into' });
    assert.deepEqual(order(made), ['[a,b]', '[c,d]', 'e']);
    assert.equal(typeof made?.[0]?.id, 'number');
    assert.deepEqual(order(dropOnRail(rail, { guildId: 'e' }, { kind: 'folder', id: 7, where: 'into' })), [
      'a',
      'b',
      '[c,d,e]',
    ]);
    assert.deepEqual(order(dropOnRail(rail, { guildId: 'c' }, { kind: 'guild', id: 'a', where: 'before' })), [
      'c',
      'a',
      'b',
      'd',
      'e',
    ]);
  });

  it('moves a whole folder, and never nests one folder in another', () => {
    assert.deepEqual(order(dropOnRail(rail, { folderId: 7 }, { kind: 'guild', id: 'a', where: 'before' })), [
      '[c,d]',
      'a',
      'b',
      'e',
    ]);
    const two = [folder(1, 'a', 'b'), folder(2, 'c', 'd')];
    assert.equal(dropOnRail(two, { folderId: 2 }, { kind: 'guild', id: 'a', where: 'into' }), null);
  });

  it('steps by keyboard: within a folder, out of it past its ends, and not past the rail', () => {
    assert.deepEqual(order(stepOnRail(rail, { guildId: 'd' }, -1)), ['a', 'b', '[d,c]', 'e']);
    assert.deepEqual(order(stepOnRail(rail, { guildId: 'c' }, -1)), ['a', 'b', 'c', 'd', 'e']);
    assert.deepEqual(order(stepOnRail(rail, { folderId: 7 }, 1)), ['a', 'b', 'e', '[c,d]']);
    assert.equal(stepOnRail(rail, { guildId: 'a' }, -1), null);
    assert.equal(stepOnRail(rail, { guildId: 'e' }, 1), null);
  });

  it('joins a guild with the item under it, and says where a thing stands', () => {
    assert.deepEqual(order(joinOnRail(rail, 'b')), ['a', '[c,d,b]', 'e']);
    assert.deepEqual(order(joinOnRail(rail, 'a')), ['[b,a]', '[c,d]', 'e']);
    assert.equal(joinOnRail(rail, 'e'), null);
    assert.deepEqual(placeOnRail(rail, { guildId: 'd' }), { position: 2, count: 2, folder: rail[2] });
    assert.deepEqual(placeOnRail(rail, { guildId: 'e' }), { position: 4, count: 4, folder: null });
  });

  it('ungroups a folder: its guilds alone where it was, in its order; an unknown folder changes nothing', () => {
    const next = ungroupOnRail(rail, 7);
    assert.deepEqual(order(next), ['a', 'b', 'c', 'd', 'e']);
    assert.deepEqual(next?.[2], single('c'));
    assert.deepEqual(order(rail), ['a', 'b', '[c,d]', 'e'], 'the rail it was given is left as it was');
    assert.equal(ungroupOnRail(rail, 8), null);
  });
});
