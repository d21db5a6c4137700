/** Message search in the chat header (English, the reference); `search-fr.ts` has exactly these keys. */
const searchEn = {
  label: 'Search',
  hints: 'Search filters',
  dateFormat: 'a date, YYYY-MM-DD',
  filter: {
    from: 'a person: messages they wrote',
    mentions: 'a person: messages mentioning them',
    in: 'a channel',
    has: 'link, embed, file, image, video, sound or sticker',
    before: 'a date: messages written before that day',
    after: 'a date: messages written after that day',
    during: 'a date: messages written that day',
    pinned: 'true or false',
  },
  results: 'Search results',
  close: 'Close search',
  searching: 'Searching…',
  count_one: '{{formatted}} result',
  count_other: '{{formatted}} results',
  noResults: 'No results for “{{query}}”.',
  noResultsHint: 'Check the spelling, use fewer words or remove a filter.',
  pages: 'Search result pages',
  previous: 'Previous',
  next: 'Next',
  pageOf: 'Page {{page}} of {{pages}}',
  problem: {
    user: '{{filter}}: nobody called “{{value}}” here.',
    channel: '{{filter}}: no channel called “{{value}}” here.',
    has: '{{filter}}: “{{value}}” is not one of {{values}}.',
    date: '{{filter}}: “{{value}}” is not a date like 2025-01-31.',
    pinned: '{{filter}}: “{{value}}” is neither true nor false.',
  },
};

export default searchEn;
