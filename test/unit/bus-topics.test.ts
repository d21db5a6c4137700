import assert from 'node:assert/strict';
import { it } from 'node:test';
import { CHAT_INVALIDATE_TOPIC } from '../../src/domains/chat/events.ts';
import { type EventBus, InProcessEventBus } from '../../src/platform/state/event-bus.ts';

// docs/architecture.md#the-event-path-bus--gateway: topics and their message types are one map (`BusTopics`).
// The `@ts-expect-error` lines are the assertion: `npm run typecheck` fails if either call ever compiles.
it('carries declared topics with their message type, and nothing else compiles', async () => {
  const bus: EventBus = new InProcessEventBus();
  const seen: (string | undefined)[] = [];
  bus.subscribe(CHAT_INVALIDATE_TOPIC, (message) => seen.push(message.guildId));
  await bus.publish(CHAT_INVALIDATE_TOPIC, { guildId: '1', userId: '2' });
  // @ts-expect-error a message of another shape
  await bus.publish(CHAT_INVALIDATE_TOPIC, { channelId: '1' });
  // @ts-expect-error a topic no module declares
  await bus.publish('chat.invalidated', { guildId: '1' });
  assert.deepEqual(seen, ['1', undefined]);
});
