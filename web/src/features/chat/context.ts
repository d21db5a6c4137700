import type { TFunction } from 'i18next';
import { createContext, useContext, useSyncExternalStore } from 'react';
import { i18next } from '../../i18n/index.ts';
import type { ChatStore } from './store.ts';

export const ChatContext = createContext<ChatStore | null>(null);

/**
 * The translation function of the chat view, given once at its root: a message row reads it from context
 * instead of calling `useTranslation`, whose set-up on every mounted row (a copy of the i18next instance) was
 * most of the cost of rendering a page of older messages. It changes, and re-renders the rows, with the language.
 */
export const ChatTranslation = createContext<TFunction | null>(null);

export function useChatT(): TFunction {
  return useContext(ChatTranslation) ?? i18next.t;
}

/** The chat store, re-rendering the caller on every change (the store is small; React batches). */
export function useChat(): ChatStore {
  const store = useContext(ChatContext);
  if (!store) throw new Error('useChat outside <ChatContext>');
  useSyncExternalStore(store.subscribe, store.getVersion);
  return store;
}

/**
 * The store for the message list: re-renders on every change, and also when only a history window changed (a
 * page loaded while scrolling), which re-renders nothing else.
 */
export function useChatHistory(): ChatStore {
  const store = useChat();
  useSyncExternalStore(store.subscribeHistory, store.getHistoryVersion);
  return store;
}

/**
 * The store without subscribing: for message rows, which re-render only when their message (or the guild's
 * roles and members, through `metaVersion`) changes, so a new message does not re-render the whole history.
 */
export function useChatStore(): ChatStore {
  const store = useContext(ChatContext);
  if (!store) throw new Error('useChatStore outside <ChatContext>');
  return store;
}

export function channelPath(channel: { id: string; guild_id?: string | undefined }): string {
  return `/channels/${channel.guild_id ?? '@me'}/${channel.id}`;
}

/** Asks the message list on screen to bring a message into view (see `jumpToMessage`). */
export const JUMP_TO_MESSAGE_EVENT = 'hearth:jump-to-message';

/**
 * A jump to a message of the channel on screen whose link is already the address (a search result or a pin opened
 * twice): the address does not change, so the list is asked directly; it loads the window around the message
 * when it no longer holds it (docs/web.md#the-history-window).
 */
export function jumpToMessage(messageId: string): void {
  window.dispatchEvent(new CustomEvent<string>(JUMP_TO_MESSAGE_EVENT, { detail: messageId }));
}
