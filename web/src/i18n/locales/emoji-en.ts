/** The emoji picker (English, the reference); `emoji-fr.ts` has exactly these keys. */
const emojiEn = {
  button: 'Emoji',
  // The reaction bar's way to the full picker; no "Emoji" in it, the composer's button of that name.
  moreReactions: 'More reactions',
  picker: 'Emoji picker',
  search: 'Find emoji',
  list: 'Emojis',
  categories: 'Emoji categories',
  results: 'Search results',
  none: 'No emoji matches “{{query}}”.',
  custom: 'Emojis of {{name}}',
  category: {
    people: 'Smileys and people',
    nature: 'Animals and nature',
    food: 'Food and drink',
    activities: 'Activities',
    travel: 'Travel and places',
    objects: 'Objects',
    symbols: 'Symbols',
    flags: 'Flags',
  },
};

export default emojiEn;
